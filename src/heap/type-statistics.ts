import { type DominatorTree, dominatorTree, type RetainingEdges } from './dominator-tree.js';
import type { HeapGraph } from './heap-graph.js';
import { NodeLabels } from './node-label.js';
import { ScratchBuffers } from './scratch-buffers.js';

/** The columns type statistics need; readGcdump loads only these (the holders' ids come from `nodeIds`). */
export const STATISTICS_COLUMNS = { nodes: ['type', 'name', 'self_size', 'edge_count'], edges: ['type', 'to_node'] } as const;

/** V8's ids of some nodes, in their order. */
export type NodeIds = (nodes: readonly number[]) => readonly number[];

/** One type (constructor or class name) of a heap: how many objects, their own bytes and what they retain. */
export interface TypeRow {
  readonly name: string;
  readonly count: number;
  readonly selfBytes: number;
  /** Bytes freed if every object of the type went: the retained sizes of those not dominated by another of the type. */
  readonly retainedBytes: number;
  /** The dominator that holds most of that (only for the types asked for). */
  readonly heldBy?: Holder;
}

/**
 * The node that dominates the largest share of a type's objects: its label (`(array) @123`) and how
 * much of the type's retained size it holds; and the type of dominators holding most of it, for
 * objects held each by a different one (the Leaf of each of a million Retained).
 */
export interface Holder {
  readonly id: number;
  readonly name: string;
  readonly bytes: number;
  readonly byType: { readonly name: string; readonly bytes: number };
}

export interface TypeStatistics {
  readonly nodes: number;
  readonly edges: number;
  readonly selfBytes: number;
  /** Nodes the root does not reach through retaining edges (their retained size is their own). */
  readonly unreachable: number;
  /** Every type, unsorted. */
  readonly types: readonly TypeRow[];
}

/**
 * The name a node is grouped under, as Chrome DevTools does: objects and native objects by their
 * constructor or class name, every other kind by its type in parentheses; hidden nodes are (system),
 * code is (compiled code).
 */
function classKey(type: string, name: string): string {
  if (type === 'object' || type === 'native') return name;
  if (type === 'hidden') return '(system)';
  if (type === 'code') return '(compiled code)';
  return `(${type})`;
}

/** Per node, the index of its type: two bytes while there are fewer than 65,536 types (nearly always). */
export type TypeIndex = Uint16Array | Uint32Array;

/** Per node, the index of its type in `names`. */
export function classify(g: HeapGraph): { classOf: TypeIndex; names: string[] } {
  const types = g.typeNames('nodes');
  const type = g.column('nodes', 'type');
  const name = g.column('nodes', 'name');
  const names: string[] = [];
  const byKey = new Map<string, number>();
  // Objects are keyed by their name's string id first: one Map look-up per node, no string per node.
  const byString = new Map<number, number>();
  const byType = new Map<number, number>();
  let classOf: TypeIndex = new Uint16Array(g.nodeCount);
  const intern = (key: string): number => {
    let k = byKey.get(key);
    if (k === undefined) {
      k = names.length;
      names.push(key);
      byKey.set(key, k);
      if (k > 0xffff && classOf instanceof Uint16Array) classOf = new Uint32Array(classOf);
    }
    return k;
  };
  for (let i = 0; i < g.nodeCount; i++) {
    const t = type[i]!;
    const typeName = types[t] ?? `type ${t}`;
    let k: number | undefined;
    if (typeName === 'object' || typeName === 'native') {
      const s = name[i]!;
      k = byString.get(s);
      if (k === undefined) byString.set(s, (k = intern(classKey(typeName, g.string(s)))));
    } else {
      k = byType.get(t);
      if (k === undefined) byType.set(t, (k = intern(classKey(typeName, ''))));
    }
    classOf[i] = k;
  }
  return { classOf, names };
}

export interface TypeTotals {
  readonly classOf: TypeIndex;
  readonly names: string[];
  readonly count: Float64Array;
  readonly selfBytes: Float64Array;
  /** All self sizes added up. */
  readonly total: number;
}

/** Objects and their own bytes per type (no dominators: what a diff needs). */
export function typeTotals(g: HeapGraph): TypeTotals {
  const { classOf, names } = classify(g);
  const self = g.column('nodes', 'self_size');
  const count = new Float64Array(names.length);
  const selfBytes = new Float64Array(names.length);
  let total = 0;
  for (let i = 0; i < g.nodeCount; i++) {
    const c = classOf[i]!;
    count[c]!++;
    selfBytes[c]! += self[i]!;
    total += self[i]!;
  }
  return { classOf, names, count, selfBytes, total };
}

/** Which edges retain, as DevTools decides: weak edges never do, shortcut edges only from the root (where they mark the user's global objects). */
export function retainingEdges(g: HeapGraph, scratch?: ScratchBuffers): RetainingEdges {
  const edgeTypes = g.typeNames('edges');
  return { first: g.firstEdges(scratch), to: g.column('edges', 'to_node'), type: g.column('edges', 'type'), never: edgeTypes.indexOf('weak'), rootOnly: edgeTypes.indexOf('shortcut') };
}

/** Per node, its retained size: four bytes each when the whole heap is under 4 GiB, else eight. */
export type RetainedSizes = Uint32Array | Float64Array;

/** Retained size per node: its own plus all it dominates, summed in reverse preorder. */
export function retainedSizes(g: HeapGraph, tree: DominatorTree, scratch = new ScratchBuffers()): RetainedSizes {
  const { order, idom } = tree;
  const self = g.column('nodes', 'self_size');
  let total = 0;
  for (let i = 0; i < g.nodeCount; i++) total += self[i]!;
  const retained = total <= 0xffffffff ? scratch.uint32(g.nodeCount) : scratch.float64(g.nodeCount);
  retained.set(self);
  for (let i = order.length - 1; i > 0; i--) {
    const v = order[i]!;
    retained[idom[v]!]! += retained[v]!;
  }
  return retained;
}

/**
 * Counts, self sizes and retained sizes per type; the root is node 0, as V8 writes it. For the
 * `holdersFor` types of largest retained size, also the dominator that holds most of it, named with
 * its id from `nodeIds` (by default the graph's id column).
 */
export function typeStatistics(g: HeapGraph, holdersFor = 0, nodeIds?: NodeIds): TypeStatistics {
  const { classOf, names, count, selfBytes, total } = typeTotals(g);
  const k = names.length;
  // Each phase's dead arrays hold the next phase's: the peak is the dominator tree's, whenever the GC runs.
  const scratch = new ScratchBuffers();
  const tree = dominatorTree(g.nodeCount, 0, retainingEdges(g, scratch), scratch, true);
  const retained = retainedSizes(g, tree, scratch);
  const { byClass, topLevel, children } = classRetained(g.nodeCount, tree, classOf, k, retained, scratch);
  const chosen = [...names.keys()].sort((a, b) => byClass[b]! - byClass[a]! || names[a]!.localeCompare(names[b]!)).slice(0, holdersFor);
  const holders = mainHolders(g, children, classOf, names, topLevel, retained, chosen, nodeIds);
  return {
    nodes: g.nodeCount,
    edges: g.edgeCount,
    selfBytes: total,
    unreachable: g.nodeCount - tree.order.length,
    types: names.map((name, c) => {
      const row = { name, count: count[c]!, selfBytes: selfBytes[c]!, retainedBytes: byClass[c]! };
      const heldBy = holders.get(c);
      return heldBy ? { ...row, heldBy } : row;
    }),
  };
}

/**
 * Per chosen type: the immediate dominator under which most of its counted objects' retained size
 * sits. One pass over the dominator tree's children lists, which group objects by dominator: per
 * dominator, its children's retained sizes are summed per type in scratch arrays (no map per object).
 */
function mainHolders(g: HeapGraph, children: DominatorChildren, classOf: TypeIndex, names: readonly string[], topLevel: Uint8Array, retained: RetainedSizes, chosen: readonly number[], nodeIds?: NodeIds): Map<number, Holder> {
  const out = new Map<number, Holder>();
  if (chosen.length === 0) return out;
  const classes = names.length;
  const wanted = new Uint8Array(classes);
  for (const c of chosen) wanted[c] = 1;
  const sum = new Float64Array(classes);
  const best = new Float64Array(classes);
  const bestHolder = new Int32Array(classes).fill(-1);
  const touched: number[] = [];
  const byHolderType = new Map<number, Map<number, number>>(chosen.map((c) => [c, new Map()]));
  const { start, list } = children;
  for (let d = 0; d < g.nodeCount; d++) {
    for (let k = start[d]!, end = start[d + 1]!; k < end; k++) {
      const w = list[k]!;
      const c = classOf[w]!;
      if (!wanted[c] || !topLevel[w]) continue;
      if (sum[c] === 0) touched.push(c);
      sum[c]! += retained[w]!;
    }
    for (const c of touched) {
      if (sum[c]! > best[c]!) [best[c], bestHolder[c]] = [sum[c]!, d];
      const types = byHolderType.get(c)!;
      types.set(classOf[d]!, (types.get(classOf[d]!) ?? 0) + sum[c]!);
      sum[c] = 0;
    }
    touched.length = 0;
  }
  const labels = new NodeLabels(g);
  const held = chosen.filter((c) => bestHolder[c]! >= 0);
  const holderNodes = held.map((c) => bestHolder[c]!);
  const ids = nodeIds ? nodeIds(holderNodes) : holderNodes.map((d) => labels.nodeId(d));
  held.forEach((c, i) => {
    const d = holderNodes[i]!;
    const [type, bytes] = [...byHolderType.get(c)!].reduce((a, b) => (b[1] > a[1] ? b : a));
    out.set(c, { id: ids[i]!, name: labels.node(d, ids[i]!), bytes: best[c]!, byType: { name: names[type]!, bytes } });
  });
  return out;
}

/** The dominator tree's children in CSR form: node d's are list[start[d]] .. list[start[d+1]]. */
interface DominatorChildren {
  readonly start: Int32Array;
  readonly list: Int32Array;
}

/**
 * Per type, the sum of retained sizes over its objects that no other object of the type dominates
 * (marked in `topLevel`), found by one walk of the dominator tree that counts, per type, how many of
 * the current node's dominators are of that type.
 */
function classRetained(nodeCount: number, tree: DominatorTree, classOf: TypeIndex, classes: number, retained: RetainedSizes, scratch: ScratchBuffers): { byClass: Float64Array; topLevel: Uint8Array; children: DominatorChildren } {
  const { order, idom } = tree;
  // Dominator-tree children in CSR form.
  const childStart = scratch.int32(nodeCount + 1).fill(0);
  for (let i = 1; i < order.length; i++) childStart[idom[order[i]!]! + 1]!++;
  for (let i = 0; i < nodeCount; i++) childStart[i + 1]! += childStart[i]!;
  const children = scratch.int32(Math.max(0, order.length - 1));
  const fill = scratch.int32(nodeCount);
  fill.set(childStart.subarray(0, nodeCount));
  for (let i = 1; i < order.length; i++) {
    const v = order[i]!;
    children[fill[idom[v]!]!++] = v;
  }
  const byClass = new Float64Array(classes);
  const topLevel = scratch.uint8(nodeCount).fill(0);
  const onPath = new Int32Array(classes);
  const cursor = fill; // reused: next child to visit per node
  for (let i = 0; i < nodeCount; i++) cursor[i] = childStart[i]!;
  // Unreachable nodes retain only themselves and are dominated by nothing.
  for (let v = 0; v < nodeCount; v++) {
    if (idom[v] !== -1) continue;
    byClass[classOf[v]!]! += retained[v]!;
    topLevel[v] = 1;
  }
  if (order.length === 0) return { byClass, topLevel, children: { start: childStart, list: children } };
  const root = order[0]!;
  byClass[classOf[root]!]! += retained[root]!;
  topLevel[root] = 1;
  onPath[classOf[root]!]!++;
  // Depth first without a stack: the way back up is the dominator chain.
  for (let v = root; v !== -1; ) {
    if (cursor[v]! < childStart[v + 1]!) {
      const w = children[cursor[v]!++]!;
      const c = classOf[w]!;
      if (onPath[c] === 0) {
        byClass[c]! += retained[w]!;
        topLevel[w] = 1;
      }
      onPath[c]!++;
      v = w;
    } else {
      onPath[classOf[v]!]!--;
      v = v === root ? -1 : idom[v]!;
    }
  }
  return { byClass, topLevel, children: { start: childStart, list: children } };
}
