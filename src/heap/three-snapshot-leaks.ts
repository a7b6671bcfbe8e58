import { dominatorTree } from './dominator-tree.js';
import type { HeapGraph } from './heap-graph.js';
import { NodeLabels } from './node-label.js';
import { RetainerPaths } from './retainer-paths.js';
import { classify, retainedSizes, retainingEdges } from './type-statistics.js';

/** Node kinds that are V8's bookkeeping, not the program's data: never reported as leaked. */
const NOT_DATA = new Set(['hidden', 'code', 'synthetic', 'object shape']);
/**
 * V8's string table: strings it holds on their shortest path are names and constants of code
 * compiled since the baseline (code compiled lazily on first use), not data.
 */
const STRING_TABLE = '(Internalized strings)';

/** Objects of one type leaked along one retainer path. */
export interface LeakGroup {
  readonly type: string;
  /** The path from the root with element indexes and object ids left out: what the group's objects share. */
  readonly path: string;
  readonly count: number;
  readonly selfBytes: number;
  /** Retained sizes of its objects that no object of a shown group dominates (so shown groups never count a byte twice). */
  readonly retainedBytes: number;
  /** One of its objects (the one retaining most): its id and full path, for `gcdump paths --id`. */
  readonly example: { readonly id: number; readonly edges: readonly number[] };
}

export interface Leaks {
  readonly objects: number;
  readonly selfBytes: number;
  /** The groups of at least `minCount` objects, largest retained size first. */
  readonly groups: readonly LeakGroup[];
  /** Objects in smaller groups (one-time allocations: a module loaded, a cache filled once), and how many such groups. */
  readonly small: { readonly objects: number; readonly groups: number };
}

/** The ids of a dump's objects, sorted, for membership by binary search. */
export function sortedIds(g: HeapGraph): Float64Array {
  return new Float64Array(g.column('nodes', 'id')).sort();
}

function has(sorted: Float64Array, id: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const x = sorted[mid]!;
    if (x === id) return true;
    if (x < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * memlab's three-snapshot method: the objects of `final` that were allocated between the baseline and
 * the target (present in the target, absent from the baseline; V8's object ids are stable within a
 * process) are the suspects, grouped by type and by their shortest retainer path in `final`, the
 * groups that retain most first.
 */
interface Group {
  readonly type: string;
  readonly path: string;
  count: number;
  selfBytes: number;
  retainedBytes: number;
  example: number;
}

export function threeSnapshotLeaks(baseline: Float64Array, target: Float64Array, final: HeapGraph, minCount: number): Leaks {
  const ids = final.column('nodes', 'id');
  const self = final.column('nodes', 'self_size');
  const to = final.column('edges', 'to_node');
  const labels = new NodeLabels(final);
  const leaked = new Uint8Array(final.nodeCount);
  for (let v = 0; v < final.nodeCount; v++) {
    const id = ids[v]!;
    if (!NOT_DATA.has(labels.nodeType(v)) && has(target, id) && !has(baseline, id)) leaked[v] = 1;
  }
  const edges = retainingEdges(final);
  const tree = dominatorTree(final.nodeCount, 0, edges);
  const retained = retainedSizes(final, tree);
  const paths = new RetainerPaths(final.nodeCount, 0, edges);
  const { classOf, names } = classify(final);
  let stringTable = -1;
  for (let v = 0; v < final.nodeCount && stringTable < 0; v++) if (labels.nodeType(v) === 'synthetic' && labels.what(v) === `${STRING_TABLE} (synthetic)`) stringTable = v;
  const groups = new Map<string, Group>();
  const groupOf: (Group | undefined)[] = new Array(final.nodeCount);
  for (let v = 0; v < final.nodeCount; v++) {
    if (!leaked[v]) continue;
    const route = paths.shortest(v);
    if (route?.some((e) => to[e] === stringTable)) {
      leaked[v] = 0;
      continue;
    }
    // The retainers and the edge into the object, not the object itself (strings are named by their text).
    const path = route === undefined ? '(unreachable)' : route.map((e, i) => `${i === 0 ? '' : `${labels.edgeShape(e)} → `}${i === route.length - 1 ? '' : labels.what(to[e]!)}`).join(' → ');
    const type = names[classOf[v]!]!;
    const key = `${type}\u0000${path}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { type, path, count: 0, selfBytes: 0, retainedBytes: 0, example: v }));
    group.count++;
    group.selfBytes += self[v]!;
    groupOf[v] = group;
    if (retained[v]! > retained[group.example]!) group.example = v;
  }
  // A group's retained bytes are those of its objects that no object of a shown group dominates, so
  // shown groups never count a byte twice. Objects of small groups do not hide what they dominate: a
  // growing Map's new backing store (one object) dominates every entry of the leak.
  const shown = (v: number): boolean => (groupOf[v]?.count ?? 0) >= minCount;
  const covered = new Uint8Array(final.nodeCount);
  for (let i = 1; i < tree.order.length; i++) {
    const v = tree.order[i]!;
    const d = tree.idom[v]!;
    if (covered[d] || shown(d)) covered[v] = 1;
  }
  for (let v = 0; v < final.nodeCount; v++) {
    const group = groupOf[v];
    if (group && !covered[v]) group.retainedBytes += retained[v]!;
  }
  let objects = 0;
  let selfBytes = 0;
  let smallObjects = 0;
  let smallGroups = 0;
  for (const g of groups.values()) {
    objects += g.count;
    selfBytes += g.selfBytes;
    if (g.count < minCount) {
      smallObjects += g.count;
      smallGroups++;
    }
  }
  const sorted = [...groups.values()].filter((g) => g.count >= minCount).sort((a, b) => b.retainedBytes - a.retainedBytes || b.count - a.count || a.type.localeCompare(b.type));
  return {
    objects,
    selfBytes,
    small: { objects: smallObjects, groups: smallGroups },
    groups: sorted.map((g) => ({ type: g.type, path: g.path, count: g.count, selfBytes: g.selfBytes, retainedBytes: g.retainedBytes, example: { id: ids[g.example]!, edges: paths.shortest(g.example) ?? [] } })),
  };
}
