import { requireBuiltin } from '../schema/this-thread.js';
import { loadNativeAddon } from '../session/native-addon.js';
import { attachCallbacks } from '../schema/provider.js';
import { onMarkCompact } from './gc-hook.js';
import { onGcPause } from './gc-pause-source.js';
import { everyInterval, type Ticking } from './interval-ticker.js';
import { ProviderSessions } from './provider-sessions.js';
import { isServiceThread } from '../session/service-thread.js';
import { runtimeGCHeap } from './definitions/gc-heap.js';

/**
 * V8's heap statistics as v8.getHeapStatistics() reads them, through the GC hook's addon where it is
 * built: node:v8 loads node:stream and ~25 more of Node's modules, ~2 ms of a startup session
 * (BENCHMARKS.md §42). The heap's spaces, an event a session asks for by keyword, still come from it.
 */
const heapStatistics = loadNativeAddon<{ heapStatistics?(out: Float64Array): void }>('gc_hook').addon?.heapStatistics;
const stats = new Float64Array(7);

/** Loaded on first use, not as the session machinery loads. */
const nodeV8 = (): typeof import('node:v8') => requireBuiltin('node:v8') as typeof import('node:v8');

function sample(reason: string): void {
  if (heapStatistics) {
    heapStatistics(stats);
    runtimeGCHeap.HeapStats.write(reason, stats[0]!, stats[1]!, stats[2]!, stats[3]!, stats[4]!, stats[5]!, stats[6]!);
  } else {
    const h = nodeV8().getHeapStatistics();
    runtimeGCHeap.HeapStats.write(reason, h.used_heap_size, h.total_heap_size, h.heap_size_limit, h.external_memory, h.malloced_memory, h.number_of_native_contexts, h.number_of_detached_contexts);
  }
  if (!runtimeGCHeap.HeapSpace.enabled) return;
  for (const s of nodeV8().getHeapSpaceStatistics()) {
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

// What runtimeGCHeap does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/gc-heap.ts).
attachCallbacks(runtimeGCHeap, { onEnable: sessions.onEnable, onDisable: sessions.onDisable });
