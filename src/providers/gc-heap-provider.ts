import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { Level } from '../schema/level.js';
import { defineProvider } from '../schema/provider.js';
import { onMarkCompact } from './gc-hook.js';
import { onGcPause } from './gc-pause-source.js';
import { everyInterval, type Ticking } from './interval-ticker.js';
import { ProviderSessions } from './provider-sessions.js';
import { isServiceThread } from './service-thread.js';

function sample(reason: string): void {
  const h = getHeapStatistics();
  runtimeGCHeap.HeapStats.write(reason, h.used_heap_size, h.total_heap_size, h.heap_size_limit, h.external_memory, h.malloced_memory, h.number_of_native_contexts, h.number_of_detached_contexts);
  if (!runtimeGCHeap.HeapSpace.enabled) return;
  for (const s of getHeapSpaceStatistics()) {
    runtimeGCHeap.HeapSpace.write(reason, s.space_name, s.space_size, s.space_used_size, s.space_available_size, s.physical_space_size);
  }
}

let ticking: Ticking | undefined;
let enabledSessions = 0;
let stopGc: (() => void) | undefined;

const sessions = new ProviderSessions('Runtime.GCHeap', (s) => {
  const joined = s.size > enabledSessions;
  enabledSessions = s.size;
  if (s.size === 0 || isServiceThread) {
    ticking?.stop();
    ticking = undefined;
    stopGc?.();
    stopGc = undefined;
    return;
  }
  stopGc ??=
    onMarkCompact(() => sample('mark-compact')) ??
    onGcPause((p) => {
      if (p.kind === 'mark-compact') sample('mark-compact');
    });
  // A session that joins gets a first sample at once.
  if (joined) sample('start');
  const sec = s.smallestNumber('IntervalSec', 1, 0.01, 3600);
  if (ticking) ticking.setInterval(sec);
  else ticking = everyInterval(sec, () => sample('interval'));
});

/**
 * `Runtime.GCHeap`: this thread's V8 heap statistics and per-space sizes when a session starts, every
 * `IntervalSec` (default 1) and after each mark-compact (read when the loop turns after it, so they
 * include what was allocated in between; told by the GC hook, or by perf_hooks without it).
 */
export const runtimeGCHeap = defineProvider('Runtime.GCHeap', {
  keywords: { heap: 0x1n, spaces: 0x2n },
  events: {
    HeapStats: {
      id: 1,
      level: Level.Informational,
      keywords: ['heap'],
      fields: [
        ['reason', 'string'],
        ['usedBytes', 'u64'],
        ['totalBytes', 'u64'],
        ['limitBytes', 'u64'],
        ['externalBytes', 'u64'],
        ['mallocedBytes', 'u64'],
        ['nativeContexts', 'u32'],
        ['detachedContexts', 'u32'],
      ],
      doc: 'v8.getHeapStatistics(); reason is start, interval or mark-compact.',
    },
    HeapSpace: {
      id: 2,
      level: Level.Verbose,
      keywords: ['spaces'],
      fields: [['reason', 'string'], ['space', 'string'], ['sizeBytes', 'u64'], ['usedBytes', 'u64'], ['availableBytes', 'u64'], ['physicalBytes', 'u64']],
      doc: 'v8.getHeapSpaceStatistics(), one event per space.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
