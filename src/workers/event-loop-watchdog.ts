/**
 * Worker entry of the main thread's watchdog: reads its heartbeat; during a stall writes the stall
 * events and the main thread's GC pauses, as its duties say.
 */
import { workerData } from 'node:worker_threads';
import '../session/control-channel.js';
import { threadOriginNs } from '../buffers/clock.js';
import { runtimeEventLoop } from '../providers/event-loop-provider.js';
import { GcHandoff } from '../providers/gc-handoff.js';
import { runtimeGC } from '../providers/gc-provider.js';
import { Heartbeat, monotonicMs, WatchdogDuty } from '../providers/heartbeat.js';
import { watchStalls } from '../providers/stall-detector.js';
import { StallGcTracer, type TracedPause } from '../providers/stall-gc-tracer.js';
import { beatIntervalMs, type WatchdogData } from '../providers/stall-watchdog.js';

const MAIN_THREAD = 0;
/** How often a traced stall hands over the pauses it has seen: the latency of those pauses. */
const SLICE_MS = 100;
const data = workerData as WatchdogData;
const hb = new Heartbeat(data.heartbeat);
const handoff = new GcHandoff(data.handoff);
const tracer = new StallGcTracer();
const origin = Number(threadOriginNs());

function writePauses(fromNs: number, pauses: readonly TracedPause[]): void {
  for (const p of pauses) {
    if (p.startNs < fromNs || !handoff.claim(p.startNs)) continue;
    runtimeGC.GCPause.writeAt((p.startNs - origin) / 1e6, p.durationNs, p.kind, 0, p.heapUsedAfter, MAIN_THREAD);
  }
}

let windowStartNs = NaN;
// Not awaited: stalls are watched from the start; the GC route joins once connect() has warmed up.
if (StallGcTracer.supported) void tracer.connect();

await watchStalls(hb, beatIntervalMs, SLICE_MS, {
  async stallStart(blockedMs) {
    if (hb.duties & WatchdogDuty.StallEvents) runtimeEventLoop.StallStart.write(MAIN_THREAD, blockedMs);
    if (!(hb.duties & WatchdogDuty.GcDuringStalls) || !runtimeGC.GCPause.enabled) return;
    windowStartNs = monotonicMs() * 1e6;
    handoff.openWindow(windowStartNs);
    if (!(await tracer.start())) handoff.closeWindow();
  },
  async stalled() {
    if (!tracer.active) return;
    writePauses(windowStartNs, await tracer.stop());
    if (!(await tracer.start())) handoff.closeWindow();
  },
  async stallEnd(durationMs) {
    if (hb.duties & WatchdogDuty.StallEvents) runtimeEventLoop.StallEnd.write(MAIN_THREAD, durationMs);
    if (!tracer.active) return;
    writePauses(windowStartNs, await tracer.stop());
    handoff.closeWindow();
  },
});
// Stopped in the middle of a stall: hand over what was seen, so the main thread holds nothing back.
if (tracer.active) writePauses(windowStartNs, await tracer.stop());
handoff.closeWindow();
tracer.close();
