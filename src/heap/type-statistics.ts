import { dominatorTree } from './dominator-tree.js';
import type { HeapGraph } from './heap-graph.js';

/** The columns type statistics need; readGcdump loads only these. */
export const STATISTICS_COLUMNS = { nodes: ['type', 'name', 'self_size', 'edge_count'], edges: ['type', 'to_node'] } as const;

/** One type (constructor or class name) of a heap: how many objects, their own bytes and what they retain. */
export interface TypeRow {
  readonly name: string;
  readonly count: number;
  readonly selfBytes: number;
  /** Bytes freed if every object of the type went: the retained sizes of those not dominated by another of the type. */
  readonly retainedBytes: number;
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

/** Per node, the index of its type in `names`. */
function classify(g: HeapGraph): { classOf: Uint32Array; names: string[] } {
  const types = g.typeNames('nodes');
  const type = g.column('nodes', 'type');
  const name = g.column('nodes', 'name');
  const names: string[] = [];
  const byKey = new Map<string, number>();
  // Objects are keyed by their name's string id first: one Map look-up per node, no string per node.
  const byString = new Map<number, number>();
  const byType = new Map<number, number>();
  const classOf = new Uint32Array(g.nodeCount);
  const intern = (key: string): number => {
    let k = byKey.get(key);
    if (k === undefined) {
      k = names.length;
      names.push(key);
      byKey.set(key, k);
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
  readonly classOf: Uint32Array;
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

/** Counts, self sizes and retained sizes per type; the root is node 0, as V8 writes it. */
export function typeStatistics(g: HeapGraph): TypeStatistics {
  const { classOf, names, count, selfBytes, total } = typeTotals(g);
  const k = names.length;
  const self = g.column('nodes', 'self_size');
  // Which edges retain, as DevTools decides: weak edges never do, shortcut edges only from the root
  // (where they mark the user's global objects).
  const edgeTypes = g.typeNames('edges');
  const tree = dominatorTree(g.nodeCount, 0, {
    first: g.firstEdges(),
    to: g.column('edges', 'to_node'),
    type: g.column('edges', 'type'),
    never: edgeTypes.indexOf('weak'),
    rootOnly: edgeTypes.indexOf('shortcut'),
  });
  const retainedBytes = classRetained(g.nodeCount, tree.order, tree.idom, classOf, k, self);
  return {
    nodes: g.nodeCount,
    edges: g.edgeCount,
    selfBytes: total,
    unreachable: g.nodeCount - tree.order.length,
    types: names.map((name, c) => ({ name, count: count[c]!, selfBytes: selfBytes[c]!, retainedBytes: retainedBytes[c]! })),
  };
}

/**
 * Retained size per node (its own plus all it dominates, summed in reverse preorder), then per type
 * the sum over its objects that no other object of the type dominates, found by one walk of the
 * dominator tree that counts, per type, how many of the current node's dominators are of that type.
 */
function classRetained(nodeCount: number, order: Int32Array, idom: Int32Array, classOf: Uint32Array, classes: number, self: ArrayLike<number>): Float64Array {
  const retained = new Float64Array(nodeCount);
  for (let i = 0; i < nodeCount; i++) retained[i] = self[i]!;
  for (let i = order.length - 1; i > 0; i--) {
    const v = order[i]!;
    retained[idom[v]!]! += retained[v]!;
  }
  // Dominator-tree children in CSR form.
  const childStart = new Int32Array(nodeCount + 1);
  for (let i = 1; i < order.length; i++) childStart[idom[order[i]!]! + 1]!++;
  for (let i = 0; i < nodeCount; i++) childStart[i + 1]! += childStart[i]!;
  const children = new Int32Array(Math.max(0, order.length - 1));
  const fill = childStart.slice(0, nodeCount);
  for (let i = 1; i < order.length; i++) {
    const v = order[i]!;
    children[fill[idom[v]!]!++] = v;
  }
  const byClass = new Float64Array(classes);
  const onPath = new Int32Array(classes);
  const stack = new Int32Array(order.length);
  const cursor = fill; // reused: next child to visit per node
  for (let i = 0; i < nodeCount; i++) cursor[i] = childStart[i]!;
  // Unreachable nodes retain only themselves and are dominated by nothing.
  for (let v = 0; v < nodeCount; v++) if (idom[v] === -1) byClass[classOf[v]!]! += retained[v]!;
  if (order.length === 0) return byClass;
  const root = order[0]!;
  let top = 0;
  stack[top++] = root;
  byClass[classOf[root]!]! += retained[root]!;
  onPath[classOf[root]!]!++;
  while (top > 0) {
    const v = stack[top - 1]!;
    if (cursor[v]! < childStart[v + 1]!) {
      const w = children[cursor[v]!++]!;
      const c = classOf[w]!;
      if (onPath[c] === 0) byClass[c]! += retained[w]!;
      onPath[c]!++;
      stack[top++] = w;
    } else {
      onPath[classOf[v]!]!--;
      top--;
    }
  }
  return byClass;
}
