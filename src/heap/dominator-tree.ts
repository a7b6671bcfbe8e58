import { ScratchBuffers } from './scratch-buffers.js';

/**
 * Immediate dominators by Lengauer and Tarjan's algorithm ("A Fast Algorithm for Finding Dominators
 * in a Flowgraph", the simple version: path compression without balancing), O(m log n) on every graph
 * shape. Cooper, Harvey and Kennedy's iterative algorithm, used before, climbs the dominator tree once
 * per predecessor, which is quadratic on a heap with a long chain and a node many objects point at (a
 * linked list whose nodes share one hidden class). Semi-NCA needs fewer arrays but its last pass
 * climbs the tree too (quadratic on a list whose nodes each hold an object one array also holds).
 * Everything is in typed arrays and iterative (no recursion, so no stack depth, nor any stack); every
 * array serves several phases: at the peak it holds the predecessor lists (one word per retaining
 * edge) and five words per node (with the edges' `first`, when the caller is done with it), and gives
 * four back to the caller.
 */
export interface DominatorTree {
  /** Nodes reachable from the root, in depth-first preorder: the root first, every node after its dominator. */
  readonly order: Int32Array;
  /** Per node: its immediate dominator (the root's is itself), or -1 when unreachable. */
  readonly idom: Int32Array;
}

type Ints = ArrayLike<number>;

/**
 * The edges in CSR form: node i's edges are first[i] .. first[i+1], edge e points at to[e]. An edge
 * whose type[e] is `never` does not retain (weak edges); one whose type is `rootOnly` retains only
 * from the root (shortcuts); -1 for either means no such type.
 */
export interface RetainingEdges {
  readonly first: Uint32Array;
  readonly to: Ints;
  readonly type: Ints;
  readonly never: number;
  readonly rootOnly: number;
}

/** Whether edge e, leaving node v, retains its target. */
export function retains(g: RetainingEdges, root: number, v: number, e: number): boolean {
  const t = g.type[e]!;
  return t !== g.never && (t !== g.rootOnly || v === root);
}

interface Preorder {
  /** Per node: its preorder number, or -1 when unreachable. */
  readonly number: Int32Array;
  /** Per number: the node. */
  readonly vertex: Int32Array;
  /** Per number: the number of its parent in the depth-first tree. */
  readonly parent: Int32Array;
  /** nodeCount + 1 words the search used, free for the next phases. */
  readonly scratch: Int32Array;
}

/**
 * A depth-first search from the root over retaining edges, numbering nodes in preorder. The path
 * from the root to the current node is the chain of depth-first parents, so no stack is kept: only,
 * per number, the next edge of that node to follow.
 */
function preorder(nodeCount: number, root: number, g: RetainingEdges, scratch: ScratchBuffers): Preorder {
  const { first, to } = g;
  const number = scratch.int32(nodeCount).fill(-1);
  const vertex = scratch.int32(nodeCount);
  const parent = scratch.int32(nodeCount);
  const cursor = scratch.int32(nodeCount + 1);
  number[root] = 0;
  vertex[0] = root;
  parent[0] = -1;
  cursor[0] = first[root]!;
  let n = 1;
  for (let current = 0; current !== -1; ) {
    const v = vertex[current]!;
    const end = first[v + 1]!;
    let e = cursor[current]!;
    while (e < end && (number[to[e]!] !== -1 || !retains(g, root, v, e))) e++;
    if (e === end) {
      current = parent[current]!;
      continue;
    }
    cursor[current] = e + 1;
    const w = to[e]!;
    number[w] = n;
    vertex[n] = w;
    parent[n] = current;
    cursor[n] = first[w]!;
    current = n++;
  }
  parent[0] = 0;
  return { number, vertex: vertex.subarray(0, n), parent: parent.subarray(0, n), scratch: cursor };
}

/**
 * Predecessors over retaining edges from reachable nodes, as preorder numbers (CSR), in the search's
 * cursors (no longer needed). Every number but the root's has at least one: its depth-first parent.
 */
function predecessors(root: number, p: Preorder, g: RetainingEdges, scratch: ScratchBuffers): { start: Int32Array; preds: Int32Array } {
  const { first, to } = g;
  const { number, vertex } = p;
  const n = vertex.length;
  const start = p.scratch.subarray(0, n + 1).fill(0);
  const each = (visit: (w: number, i: number) => void): void => {
    for (let i = 0; i < n; i++) {
      const v = vertex[i]!;
      for (let e = first[v]!, end = first[v + 1]!; e < end; e++) if (retains(g, root, v, e)) visit(number[to[e]!]!, i);
    }
  };
  // Counts, then running ends, then filled from each end backwards: start[w] ends at w's first.
  each((w) => start[w]!++);
  for (let i = 1; i <= n; i++) start[i]! += start[i - 1]!;
  const preds = scratch.int32(start[n]!);
  each((w, i) => (preds[--start[w]!] = i));
  return { start, preds };
}

/**
 * The dominator tree of the nodes the root reaches. Its arrays come from `scratch`, and those it no
 * longer needs go back there for the caller's next phase. With `lastUseOfEdges`, the caller reads
 * `edges.first` no more, and it joins them as soon as the predecessor lists are built.
 */
export function dominatorTree(nodeCount: number, root: number, edges: RetainingEdges, scratch = new ScratchBuffers(), lastUseOfEdges = false): DominatorTree {
  const p = preorder(nodeCount, root, edges, scratch);
  const { vertex } = p;
  const n = vertex.length;
  const { start, preds } = predecessors(root, p, edges, scratch);
  if (lastUseOfEdges) scratch.give(edges.first);
  // Everything below is in preorder numbers (the root is 0). The depth-first parent array doubles as
  // the link-eval forest's `ancestor`: a number's parent is read only while it is processed, and it is
  // linked (its ancestor becomes meaningful) only after. Numbers above `linked` are in the forest.
  const ancestor = p.parent;
  // The node-to-number map is not needed again: its array holds the semidominators.
  const semi = p.number;
  // Per number: its label once it is linked; before that, the first number waiting in its bucket
  // (those whose semidominator it is). A bucket is emptied before its owner is linked: every number
  // waiting in it lies below one of the owner's children, after which it is emptied.
  const label = scratch.int32(n).fill(-1);
  // Per number: while it waits in a bucket the next one in that bucket, then its (relative) dominator,
  // kept in the first slot of its predecessor list, read by then (the root has no slot: it is its own).
  const idomSlot = start;
  for (let i = 0; i < n; i++) semi[i] = i;
  let linked = n;
  /**
   * The number with the least semidominator on v's forest path (v itself when v is a tree root),
   * compressing that path: up it reversing the ancestor links (no stack), then down it from the top
   * restoring them compressed, each node taking its ancestor's label when that is better.
   */
  const evaluate = (v: number): number => {
    if (v < linked) return v;
    let below = -1;
    let u = v;
    while (ancestor[u]! >= linked) {
      const up = ancestor[u]!;
      ancestor[u] = below;
      below = u;
      u = up;
    }
    // u is the top of the path to compress: its ancestor is a forest root, which stays its ancestor.
    let a = u;
    for (u = below; u !== -1; ) {
      const next = ancestor[u]!;
      if (semi[label[a]!]! < semi[label[u]!]!) label[u] = label[a]!;
      ancestor[u] = ancestor[a]!;
      a = u;
      u = next;
    }
    return label[v]!;
  };
  for (let w = n - 1; w > 0; w--) {
    const parent = ancestor[w]!;
    let s = semi[w]!;
    for (let k = start[w]!, end = start[w + 1]!; k < end; k++) {
      const u = evaluate(preds[k]!);
      if (semi[u]! < s) s = semi[u]!;
    }
    semi[w] = s;
    preds[idomSlot[w]!] = label[s]!;
    label[s] = w;
    linked = w;
    label[w] = w;
    for (let v = label[parent]!; v !== -1; ) {
      const next = preds[idomSlot[v]!]!;
      const u = evaluate(v);
      preds[idomSlot[v]!] = semi[u]! < semi[v]! ? u : parent;
      v = next;
    }
    label[parent] = -1;
  }
  // A relative dominator is a processed number (never the root), so every read below has a slot.
  for (let w = 1; w < n; w++) {
    const d = preds[idomSlot[w]!]!;
    if (d !== semi[w]) preds[idomSlot[w]!] = preds[idomSlot[d]!]!;
  }
  // Back to node ids, in the ancestors' array (no longer needed): unreachable nodes stay -1.
  const byNode = new Int32Array(ancestor.buffer, 0, nodeCount).fill(-1);
  if (n > 0) byNode[vertex[0]!] = vertex[0]!;
  for (let i = 1; i < n; i++) byNode[vertex[i]!] = vertex[preds[idomSlot[i]!]!]!;
  scratch.give(semi, start, label, preds);
  return { order: vertex, idom: byNode };
}
