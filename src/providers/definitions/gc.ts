import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Runtime.GC`: one `GCPause` per V8 pause of the thread named in `thread`, timestamped with its true
 * start. With the GC hook (native/gc-hook) V8's GC callbacks record each pause as it happens; it is
 * written when the loop turns, by the watchdog while the main thread's loop is blocked longer than
 * `StallMs` (default 100), and before the session stops or the thread exits. Without the hook,
 * perf_hooks delivers pauses when the loop turns only (docs/PROVIDERS.md).
 */
export const runtimeGC = defineBuiltinProvider('Runtime.GC', {
  events: {
    GCPause: {
      id: 1,
      version: 1,
      level: Level.Informational,
      fields: [['durationNs', 'u64'], ['kind', 'string'], ['flags', 'u32'], ['heapUsedAfter', 'f64'], ['thread', 'u32'], ['preemptions', 'f64']],
      doc: "A stop-the-world GC pause of `thread`; kind is scavenge, mark-compact, incremental-marking, weak-callbacks or what V8 reports; heapUsedAfter is V8's used heap size after it; preemptions counts the times the OS gave the thread's CPU to another during it (its duration then includes waiting for a CPU). The last two are NaN when unknown (no GC hook; preemptions off Linux).",
    },
    GCPausesLost: {
      id: 2,
      level: Level.Warning,
      fields: [['count', 'u32'], ['thread', 'u32']],
      doc: "Pauses of `thread` that its GC hook could not record: its ring of 8,192 pauses was full because nothing took from it (the thread's loop did not turn meanwhile; the main thread's watchdog takes them during stalls).",
    },
    GCPausesFlushed: {
      id: 3,
      level: Level.Informational,
      fields: [['thread', 'u32']],
      doc: "With the GC hook, written as a session stops or `thread` ends: every pause of `thread` that ended before this moment has been handed to the trace, as a GCPause (which a full buffer may still drop, counted with the session's drops) or counted in GCPausesLost. A pause after it, such as one the stop itself causes, is not.",
    },
  },
}, () => new URL('../default-profile.js', import.meta.url).href);
