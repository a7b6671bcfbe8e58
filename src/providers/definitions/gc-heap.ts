import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Runtime.GCHeap`: this thread's V8 heap statistics and per-space sizes when a session starts, every
 * `IntervalSec` (default 1) and after each mark-compact (read when the loop turns after it, so they
 * include what was allocated in between; told by the GC hook, or by perf_hooks without it).
 */
export const runtimeGCHeap = defineBuiltinProvider('Runtime.GCHeap', {
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
}, () => new URL('../default-profile.js', import.meta.url).href);
