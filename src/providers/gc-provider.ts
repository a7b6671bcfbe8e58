import { defineProvider } from '../schema/provider.js';
import { Level } from '../schema/level.js';
import { flushGcPauses, type GcPause, onGcPause } from './gc-pause-source.js';
import { ProviderSessions } from './provider-sessions.js';

function writePause(p: GcPause): void {
  runtimeGC.GCPause.writeAt(p.startMs, Math.round(p.durationMs * 1e6), p.kind, p.flags, p.heapUsedAfter);
}

let stop: (() => void) | undefined;

// A session that stops gets the pauses still in flight: its onDisable runs while it still records.
const sessions = new ProviderSessions('Runtime.GC', (s) => {
  if (s.size > 0 && stop) flushGcPauses();
  if (s.size > 0 && !stop) stop = onGcPause(writePause);
  else if (s.size === 0 && stop) {
    stop();
    stop = undefined;
  }
});

/**
 * `Runtime.GC`: one `GCPause` per V8 pause of the thread that writes it. The event's timestamp is the
 * pause's true start, even though perf_hooks hands it over later (the reader puts it back in order).
 */
export const runtimeGC = defineProvider('Runtime.GC', {
  events: {
    GCPause: {
      id: 1,
      level: Level.Informational,
      fields: [['durationNs', 'u64'], ['kind', 'string'], ['flags', 'u32'], ['heapUsedAfter', 'f64']],
      doc: 'A stop-the-world GC pause; kind is scavenge, mark-compact, incremental-marking, weak-callbacks or what V8 reports; heapUsedAfter is NaN when unknown.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
sessions.ready();
