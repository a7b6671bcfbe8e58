import { isMainThread as onMainThread, threadId as thisThreadId } from '../../schema/this-thread.js';
import { WatchdogDuty } from '../event-loop/heartbeat.js';
import { setWatchdogDuty } from '../event-loop/stall-watchdog.js';
import { everyInterval, type Ticking } from '../interval-ticker.js';
import { runtimeCpuSampler } from '../definitions/cpu-sampler.js';
import { INSPECTOR_ROTATE_SEC, InspectorRoute } from './inspector-route.js';
import { NativeSamples, nativeSampler, nativeSamplerMissing } from './native-route.js';
const isMainThread = onMainThread();
const threadId = thisThreadId();

/**
 * How often a thread whose loop turns rotates its profiles when due (native/gc-hook/cpu_sampler.cc: the
 * main thread every second, workers every 100 ms) and writes its samples.
 */
const NATIVE_WRITE_SEC = isMainThread ? 0.25 : 0.1;
/** The stall after which the watchdog writes the main thread's samples while its loop is blocked. */
const STALL_MS = 100;

interface Route {
  readonly name: 'native' | 'inspector';
  setInterval(us: number): void;
  /** Writes what was sampled until now. */
  flush(): void;
  /** Ends sampling and writes the last samples. */
  stop(): void;
}

function nativeRoute(sampler: NonNullable<typeof nativeSampler>, intervalUs: number): Route {
  const samples = new NativeSamples(sampler);
  sampler.start(threadId, intervalUs);
  const flush = (): void => {
    sampler.rotate(true);
    samples.writeFor(threadId);
    // A session that stops, or a process that exits, ends before the next tick would write the
    // samples of workers that ended (terminated while they spun) or wait: all of them, now.
    if (isMainThread) samples.writeWaiting(0);
  };
  const ticking = everyInterval(NATIVE_WRITE_SEC, () => {
    sampler.rotate();
    samples.writeFor(threadId);
    if (isMainThread) samples.writeWaiting();
  });
  // While the main loop is blocked, its watchdog writes what the rotation thread's interrupts queue.
  if (isMainThread) setWatchdogDuty(WatchdogDuty.CpuSamplesDuringStalls, STALL_MS);
  return {
    name: 'native',
    setInterval: (us) => sampler.start(threadId, us),
    flush,
    stop() {
      ticking.stop();
      if (isMainThread) setWatchdogDuty(WatchdogDuty.CpuSamplesDuringStalls, undefined);
      sampler.stop();
      samples.writeFor(threadId);
      if (isMainThread) samples.writeWaiting(0);
    },
  };
}

/** The fallback's warning is given once per process, not at every session start. */
let warnedMissing = false;

function inspectorRoute(intervalUs: number): Route {
  if (nativeSamplerMissing && isMainThread && !warnedMissing) {
    warnedMissing = true;
    process.emitWarning(`tracepipe: Runtime.CpuSampler runs without its native sampler (${nativeSamplerMissing}): samples are written when the event loop turns, with a gap of a few ms each second (docs/PROVIDERS.md)`);
  }
  const inspector = new InspectorRoute(threadId, intervalUs);
  const ticking: Ticking = everyInterval(INSPECTOR_ROTATE_SEC, () => inspector.rotate());
  return {
    name: 'inspector',
    setInterval: (us) => inspector.setInterval(us),
    flush: () => inspector.rotate(),
    stop() {
      ticking.stop();
      inspector.stop();
    },
  };
}

let route: Route | undefined;
let currentUs = 0;

/** Starts, retunes or (undefined) stops this thread's sampling as the set of sessions changes. */
export function configureSampling(intervalUs: number | undefined): void {
  if (intervalUs === undefined) {
    if (!route) return;
    route.stop();
    route = undefined;
    runtimeCpuSampler.SamplerStopped.write(threadId);
    return;
  }
  if (!route) route = nativeSampler ? nativeRoute(nativeSampler, intervalUs) : inspectorRoute(intervalUs);
  else if (intervalUs !== currentUs) route.setInterval(intervalUs);
  currentUs = intervalUs;
  // A session that joins learns the sampling from here (its writers define everything again: SampleWriter).
  runtimeCpuSampler.SamplerStarted.write(threadId, intervalUs, route.name);
}

/** Before a session stops or the thread exits: the samples until now. */
export function flushSamples(): void {
  route?.flush();
}
