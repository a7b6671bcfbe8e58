/** Worker entry of the main thread's stall watchdog: reads its heartbeat, writes stall events. */
import { workerData } from 'node:worker_threads';
import '../session/control-channel.js';
import { runtimeEventLoop } from '../providers/event-loop-provider.js';
import { Heartbeat } from '../providers/heartbeat.js';
import { watchStalls } from '../providers/stall-detector.js';
import { beatIntervalMs, type WatchdogData } from '../providers/stall-watchdog.js';

const MAIN_THREAD = 0;
const hb = new Heartbeat((workerData as WatchdogData).heartbeat);
await watchStalls(hb, beatIntervalMs, {
  stallStart: (blockedMs) => runtimeEventLoop.StallStart.write(MAIN_THREAD, blockedMs),
  stallEnd: (durationMs) => runtimeEventLoop.StallEnd.write(MAIN_THREAD, durationMs),
});
