/**
 * Immediate dominators by Lengauer and Tarjan's algorithm ("A Fast Algorithm for Finding Dominators
 * in a Flowgraph", the simple version: path compression without balancing), O(m log n) on every graph
 * shape. Cooper, Harvey and Kennedy's iterative algorithm, used before, climbs the dominator tree once
 * per predecessor, which is quadratic on a heap with a long chain and a node many objects point at (a
 * linked list whose nodes share one hidden class). Everything is in typed arrays and iterative (no
 * recursion, so no stack depth, nor any stack); arrays are reused across phases: at the peak it holds
 * the predecessor lists (one word per retaining edge) and six words per node.
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
  /** An array of nodeCount words the search used, free for the next phases. */
  readonly scratch: Int32Array;
}

/**
 * A depth-first search from the root over retaining edges, numbering nodes in preorder. The path
 * from the root to the current node is the chain of depth-first parents, so no stack is kept: only,
 * per number, the next edge of that node to follow.
 */
function preorder(nodeCount: number, root: number, g: RetainingEdges): Preorder {
  const { first, to } = g;
  const number = new Int32Array(nodeCount).fill(-1);
  const vertex = new Int32Array(nodeCount);
  const parent = new Int32Array(nodeCount);
  const cursor = new Int32Array(nodeCount);
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

/** Predecessors over retaining edges from reachable nodes, as preorder numbers (CSR). */
function predecessors(root: number, p: Preorder, g: RetainingEdges): { start: Int32Array; preds: Int32Array } {
  const { first, to } = g;
  const { number, vertex } = p;
  const n = vertex.length;
  const start = new Int32Array(n + 1);
  const each = (visit: (w: number, i: number) => void): void => {
    for (let i = 0; i < n; i++) {
      const v = vertex[i]!;
      for (let e = first[v]!, end = first[v + 1]!; e < end; e++) if (retains(g, root, v, e)) visit(number[to[e]!]!, i);
    }
  };
  // Counts, then running ends, then filled from each end backwards: start[w] ends at w's first.
  each((w) => start[w]!++);
  for (let i = 1; i <= n; i++) start[i]! += start[i - 1]!;
  const preds = new Int32Array(start[n]!);
  each((w, i) => (preds[--start[w]!] = i));
  return { start, preds };
}

export function dominatorTree(nodeCount: number, root: number, edges: RetainingEdges): DominatorTree {
  const p = preorder(nodeCount, root, edges);
  const { vertex } = p;
  const n = vertex.length;
  const { start, preds } = predecessors(root, p, edges);
  // Everything below is in preorder numbers (the root is 0). The depth-first parent array doubles as
  // the link-eval forest's `ancestor`: a number's parent is read only while it is processed, and it is
  // linked (its ancestor becomes meaningful) only after. Numbers above `linked` are in the forest.
  const ancestor = p.parent;
  const label = p.scratch;
  // The node-to-number map is not needed again until its array holds the result.
  const semi = p.number;
  const bucket = new Int32Array(n).fill(-1);
  // While a number waits in a bucket this holds the next one in that bucket; then its dominator.
  const idom = new Int32Array(n);
  for (let i = 0; i < n; i++) semi[i] = label[i] = i;
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
    idom[w] = bucket[s]!;
    bucket[s] = w;
    linked = w;
    for (let v = bucket[parent]!; v !== -1; ) {
      const next = idom[v]!;
      const u = evaluate(v);
      idom[v] = semi[u]! < semi[v]! ? u : parent;
      v = next;
    }
    bucket[parent] = -1;
  }
  idom[0] = 0;
  for (let w = 1; w < n; w++) if (idom[w] !== semi[w]) idom[w] = idom[idom[w]!]!;
  // Back to node ids, in the semidominators' array (no longer needed): unreachable nodes stay -1.
  const byNode = semi.fill(-1);
  for (let i = 0; i < n; i++) byNode[vertex[i]!] = vertex[idom[i]!]!;
  return { order: vertex, idom: byNode };
}
