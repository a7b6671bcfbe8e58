import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Runtime.EventLoop`: this thread's event-loop delay and utilisation every `IntervalSec` (default 1),
 * and, for the main thread, stalls longer than `StallMs` (default 100) seen by a watchdog thread
 * while they last.
 */
export const runtimeEventLoop = defineBuiltinProvider('Runtime.EventLoop', {
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
}, () => new URL('../default-profile.js', import.meta.url).href);
