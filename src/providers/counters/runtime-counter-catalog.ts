import { requireBuiltin } from '../../schema/this-thread.js';
import { TALLY_KINDS } from '../gc-pause-tally.js';

/** gauge: a value at the end of the interval; interval: an amount during it (tools show it as a rate). */
export type CounterKind = 'gauge' | 'interval';

export interface RuntimeCounter {
  readonly name: string;
  readonly id: number;
  readonly unit: string;
  readonly kind: CounterKind;
  readonly description: string;
}

/** `old_space` → `OldSpaceUsed`. */
export function spaceCounter(space: string): string {
  return `${space.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}Used`;
}

/** `mark-compact`, `Count` → `GcMarkCompactCount`. */
export function gcCounter(kind: string, figure: 'Count' | 'PauseMs'): string {
  return `Gc${kind.replace(/(^|-)([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}${figure}`;
}

const fixed: RuntimeCounter[] = [
  { name: 'CpuUser', id: 1, unit: 'percent', kind: 'gauge', description: 'CPU time of the process in user mode over the interval, % of one core' },
  { name: 'CpuSystem', id: 2, unit: 'percent', kind: 'gauge', description: 'CPU time of the process in the kernel over the interval, % of one core' },
  { name: 'Rss', id: 3, unit: 'bytes', kind: 'gauge', description: 'resident set size of the process (process.memoryUsage().rss)' },
  { name: 'HeapUsed', id: 4, unit: 'bytes', kind: 'gauge', description: "V8 heap in use on the main thread (process.memoryUsage().heapUsed)" },
  { name: 'HeapTotal', id: 5, unit: 'bytes', kind: 'gauge', description: "V8 heap reserved on the main thread (process.memoryUsage().heapTotal)" },
  { name: 'External', id: 6, unit: 'bytes', kind: 'gauge', description: 'memory of C++ objects bound to JavaScript objects (process.memoryUsage().external)' },
  { name: 'ArrayBuffers', id: 7, unit: 'bytes', kind: 'gauge', description: 'memory of ArrayBuffers and SharedArrayBuffers, Buffers included (process.memoryUsage().arrayBuffers)' },
  { name: 'GcCount', id: 8, unit: 'collections', kind: 'interval', description: 'GC pauses of the main thread during the interval, all kinds' },
  { name: 'GcPauseMs', id: 9, unit: 'ms', kind: 'interval', description: 'time the main thread spent in GC pauses during the interval, all kinds' },
  { name: 'GcTimePercent', id: 10, unit: 'percent', kind: 'gauge', description: 'share of the interval the main thread spent in GC pauses' },
  { name: 'LoopDelayP50', id: 11, unit: 'ms', kind: 'gauge', description: 'event-loop delay of the main thread over the interval, median (how late a 10 ms timer ran)' },
  { name: 'LoopDelayP99', id: 12, unit: 'ms', kind: 'gauge', description: 'event-loop delay of the main thread over the interval, 99th percentile' },
  { name: 'LoopDelayMax', id: 13, unit: 'ms', kind: 'gauge', description: 'event-loop delay of the main thread over the interval, longest (a loop that never turned: the whole interval)' },
  { name: 'LoopUtilization', id: 14, unit: 'percent', kind: 'gauge', description: "share of the interval the main thread's event loop was busy (eventLoopUtilization)" },
  { name: 'ActiveResources', id: 15, unit: 'resources', kind: 'gauge', description: 'handles and requests keeping the event loop alive (process.getActiveResourcesInfo())' },
  { name: 'IntervalMs', id: 16, unit: 'ms', kind: 'gauge', description: 'length of the interval these figures cover (longer than asked when the event loop was blocked); written last, it closes each publication' },
];

const byKind: RuntimeCounter[] = TALLY_KINDS.flatMap((kind, i) => [
  { name: gcCounter(kind, 'Count'), id: 20 + 2 * i, unit: 'collections', kind: 'interval', description: `${kind} pauses of the main thread during the interval` },
  { name: gcCounter(kind, 'PauseMs'), id: 21 + 2 * i, unit: 'ms', kind: 'interval', description: `time in ${kind} pauses of the main thread during the interval` },
]);

/**
 * The heap spaces of the V8s of Node 20, 22 and 24, in v8.getHeapSpaceStatistics()'s order (checked
 * against it by a test on each line CI runs). Asking V8 loads node:v8 and, through it, node:stream:
 * 28 of Node's modules and ~2 ms of every `import 'tracepipe'`, for names a version fixes.
 */
const KNOWN_SPACES: Readonly<Record<string, readonly string[]>> = {
  '11.3': ['read_only_space', 'new_space', 'old_space', 'code_space', 'shared_space', 'new_large_object_space', 'large_object_space', 'code_large_object_space', 'shared_large_object_space'],
  '12.4': ['read_only_space', 'new_space', 'old_space', 'code_space', 'shared_space', 'trusted_space', 'new_large_object_space', 'large_object_space', 'code_large_object_space', 'shared_large_object_space', 'trusted_large_object_space'],
  '13.6': ['read_only_space', 'new_space', 'old_space', 'code_space', 'shared_space', 'trusted_space', 'shared_trusted_space', 'new_large_object_space', 'large_object_space', 'code_large_object_space', 'shared_large_object_space', 'shared_trusted_large_object_space', 'trusted_large_object_space'],
};

/** V8's heap spaces differ between versions: the ones this V8 has (any V8 not listed above is asked, once). */
export const RUNTIME_SPACES: readonly string[] =
  KNOWN_SPACES[/^\d+\.\d+/.exec(process.versions.v8)?.[0] ?? ''] ??
  (requireBuiltin('node:v8') as typeof import('node:v8')).getHeapSpaceStatistics().map((s) => s.space_name);

const spaces: RuntimeCounter[] = RUNTIME_SPACES.map((space, i) => ({
  name: spaceCounter(space),
  id: 40 + i,
  unit: 'bytes',
  kind: 'gauge',
  description: `V8 heap space ${space} in use on the main thread (v8.getHeapSpaceStatistics())`,
}));

/** Runtime.Counters' counters: names, ids, units and descriptions are contracts (docs/COUNTERS.md). */
export const RUNTIME_COUNTERS: readonly RuntimeCounter[] = [...fixed, ...byKind, ...spaces];
