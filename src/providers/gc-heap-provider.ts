import { requireBuiltin } from '../schema/this-thread.js';
import { attachCallbacks } from '../schema/provider.js';
import { onMarkCompact } from './gc-hook.js';
import { onGcPause } from './gc-pause-source.js';
import { everyInterval, type Ticking } from './interval-ticker.js';
import { ProviderSessions } from './provider-sessions.js';
import { isServiceThread } from '../session/service-thread.js';
import { runtimeGCHeap } from './definitions/gc-heap.js';

function sample(reason: string): void {
  // Loaded here, not as the session machinery loads: node:v8 loads node:stream and ~25 more of Node's modules.
  const { getHeapSpaceStatistics, getHeapStatistics } = requireBuiltin('node:v8') as typeof import('node:v8');
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

// What runtimeGCHeap does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/gc-heap.ts).
attachCallbacks(runtimeGCHeap, { onEnable: sessions.onEnable, onDisable: sessions.onDisable });
