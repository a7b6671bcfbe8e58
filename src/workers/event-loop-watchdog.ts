/**
 * Worker entry of the main thread's watchdog: reads its heartbeat and, while its sampler rests, its
 * loop's idle time (or its schedstat); during a stall writes the stall events, the main thread's GC pauses and its CPU samples, as its duties say.
 */
import { workerData } from 'node:worker_threads';
import { joinRunningSessions } from '../session/control-channel.js';
import { runtimeEventLoop } from '../providers/definitions/event-loop.js';
import { runtimeGC } from '../providers/definitions/gc.js';
import { writeGcPauses } from '../providers/gc-provider.js';
import { GcRing } from '../providers/gc-ring.js';
import { Heartbeat, WatchdogDuty } from '../providers/event-loop/heartbeat.js';
import { watchStalls } from '../providers/event-loop/stall-detector.js';
import { beatIntervalMs, type WatchdogData } from '../providers/event-loop/stall-watchdog.js';
import { openRestProbe } from '../providers/event-loop/rest-clock.js';
import { runtimeCpuSampler } from '../providers/definitions/cpu-sampler.js';
import { NativeSamples, nativeSampler } from '../providers/cpu-sampler/native-route.js';

joinRunningSessions();

const MAIN_THREAD = 0;
/** How often a stall's GC pauses are written while it lasts: their latency. */
const TICK_MS = 50;
const data = workerData as WatchdogData;
const hb = new Heartbeat(data.heartbeat);
const gcRing = data.gcRing ? new GcRing(data.gcRing) : undefined;
const mainRest = openRestProbe(data.restRoute, hb);

/**
 * The main thread's pauses so far; the main thread takes them itself once its loop turns. Only while
 * this thread knows of a session that wants them: a pause taken is written nowhere else.
 */
function writeMainGcPauses(): void {
  if (gcRing && hb.duties & WatchdogDuty.GcDuringStalls && runtimeGC.GCPause.enabled) writeGcPauses(gcRing, MAIN_THREAD);
}

const mainSamples = nativeSampler ? new NativeSamples(nativeSampler) : undefined;

/** The main thread's CPU samples so far (the rotation thread's interrupts queue them while it is blocked), and those of workers that wait. */
function writeMainSamples(): void {
  if (!mainSamples || !(hb.duties & WatchdogDuty.CpuSamplesDuringStalls) || !runtimeCpuSampler.Sample.enabled) return;
  mainSamples.writeFor(MAIN_THREAD);
  mainSamples.writeWaiting();
}

function duringStall(): void {
  writeMainGcPauses();
  writeMainSamples();
}

/** One turn of this thread's loop (session news, its buffers' timers) without sleeping in it. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

await watchStalls(
  hb,
  mainRest,
  beatIntervalMs,
  TICK_MS,
  {
    stallStart(blockedMs) {
      if (hb.duties & WatchdogDuty.StallEvents) runtimeEventLoop.StallStart.write(MAIN_THREAD, blockedMs);
      duringStall();
    },
    stalled: duringStall,
    stallEnd(durationMs) {
      if (hb.duties & WatchdogDuty.StallEvents) runtimeEventLoop.StallEnd.write(MAIN_THREAD, durationMs);
    },
  },
  yieldToLoop,
);
mainRest?.close();
