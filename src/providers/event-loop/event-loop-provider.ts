import { isMainThread } from 'node:worker_threads';
import { Level } from '../../schema/level.js';
import { defineProvider } from '../../schema/provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../service-thread.js';
import { WatchdogDuty } from './heartbeat.js';
import { type LoopInterval, useLoopIntervals } from './delay-monitor.js';
import { setWatchdogDuty } from './stall-watchdog.js';

function writeDelay(i: LoopInterval): void {
  runtimeEventLoop.Delay.write(i.p50Ms, i.p99Ms, i.maxMs, i.meanMs, i.utilization, i.intervalMs, i.samples);
}

// One delay monitor per thread (each has its own loop; Runtime.Counters shares it) and one watchdog
// for the main thread, shared by every session: the finest IntervalSec and the smallest StallMs asked for win.
const sessions = new ProviderSessions('Runtime.EventLoop', (s) => {
  if (isServiceThread) return;
  const wantDelay = s.size > 0 && runtimeEventLoop.Delay.enabled;
  const wantStalls = s.size > 0 && isMainThread && runtimeEventLoop.StallStart.enabled;
  // The last session gets the partial interval before it goes.
  useLoopIntervals('event-loop', wantDelay ? s.smallestNumber('IntervalSec', 1, 0.01, 3600) : undefined, writeDelay);
  setWatchdogDuty(WatchdogDuty.StallEvents, wantStalls ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
});

/**
 * `Runtime.EventLoop`: this thread's event-loop delay and utilisation every `IntervalSec` (default 1),
 * and, for the main thread, stalls longer than `StallMs` (default 100) seen by a watchdog thread
 * while they last.
 */
export const runtimeEventLoop = defineProvider('Runtime.EventLoop', {
  keywords: { delay: 0x1n, stalls: 0x2n },
  events: {
    Delay: {
      id: 1,
      level: Level.Informational,
      keywords: ['delay'],
      fields: [['p50Ms', 'f64'], ['p99Ms', 'f64'], ['maxMs', 'f64'], ['meanMs', 'f64'], ['utilization', 'f64'], ['intervalMs', 'f64'], ['samples', 'u32']],
      doc: 'Event-loop delay percentiles (how late a 10 ms timer runs; periods the loop slept count as on time) and utilisation over the last interval.',
    },
    StallStart: {
      id: 2,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['blockedMs', 'f64']],
      doc: "Written by the watchdog thread while `thread`'s loop is still blocked: it has not turned for blockedMs (since its last beat, or since its thread woke from rest).",
    },
    StallEnd: {
      id: 3,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['durationMs', 'f64']],
      doc: 'The stalled loop turned again; durationMs is from the last moment it was known free (a beat, or its wake) to the turn that ended the stall.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
