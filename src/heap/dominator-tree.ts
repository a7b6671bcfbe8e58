/**
 * Immediate dominators by Cooper, Harvey and Kennedy's iterative algorithm ("A Simple, Fast Dominance
 * Algorithm", the one Chrome DevTools runs on heap snapshots): over typed arrays and without recursion,
 * so millions of nodes take seconds and no stack depth. Memory is the point at this size: besides the
 * predecessor lists (one word per edge) it keeps three words per node, scratch arrays are dropped as
 * soon as their phase ends, and the result reuses one.
 */
export interface DominatorTree {
  /** Nodes reachable from the root, in reverse postorder: the root first, every node after its dominator. */
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

/** Postorder numbers from the root over retaining edges (-1: unreachable), and the nodes in postorder. */
function postorder(nodeCount: number, root: number, g: RetainingEdges): { post: Int32Array; nodes: Int32Array } {
  const { first, to, type, never, rootOnly } = g;
  const post = new Int32Array(nodeCount).fill(-1);
  const nodes = new Int32Array(nodeCount);
  const stack = new Int32Array(nodeCount);
  const cursor = new Uint32Array(nodeCount);
  // -2 marks a node on the stack (visited, not finished).
  let top = 0;
  let n = 0;
  post[root] = -2;
  stack[top++] = root;
  cursor[root] = first[root]!;
  while (top > 0) {
    const v = stack[top - 1]!;
    const end = first[v + 1]!;
    let e = cursor[v]!;
    let pushed = false;
    while (e < end) {
      const w = to[e]!;
      const t = type[e]!;
      e++;
      if (t === never || (t === rootOnly && v !== root) || post[w] !== -1) continue;
      cursor[v] = e;
      post[w] = -2;
      cursor[w] = first[w]!;
      stack[top++] = w;
      pushed = true;
      break;
    }
    if (!pushed) {
      top--;
      post[v] = n;
      nodes[n++] = v;
    }
  }
  return { post, nodes: nodes.subarray(0, n) };
}

/** Predecessors over retaining edges from reachable nodes, in postorder numbers (CSR). */
function predecessors(root: number, post: Int32Array, nodes: Int32Array, g: RetainingEdges): { start: Int32Array; preds: Int32Array } {
  const { first, to, type, never, rootOnly } = g;
  const n = nodes.length;
  const start = new Int32Array(n + 1);
  const each = (visit: (w: number, i: number) => void): void => {
    for (let i = 0; i < n; i++) {
      const v = nodes[i]!;
      for (let e = first[v]!, end = first[v + 1]!; e < end; e++) {
        const t = type[e]!;
        if (t === never || (t === rootOnly && v !== root)) continue;
        visit(post[to[e]!]!, i);
      }
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
  const { post, nodes } = postorder(nodeCount, root, edges);
  const n = nodes.length;
  const { start, preds } = predecessors(root, post, nodes, edges);
  // In postorder numbers: the root is n - 1, and a dominator always has a higher number than the
  // nodes it dominates, which is what lets `intersect` climb by comparing numbers.
  const doms = new Int32Array(n).fill(-1);
  doms[n - 1] = n - 1;
  for (let changed = true; changed; ) {
    changed = false;
    for (let b = n - 2; b >= 0; b--) {
      let idom = -1;
      for (let k = start[b]!, end = start[b + 1]!; k < end; k++) {
        let p = preds[k]!;
        if (doms[p] === -1) continue;
        if (idom === -1) {
          idom = p;
          continue;
        }
        let q = idom;
        while (p !== q) {
          while (p < q) p = doms[p]!;
          while (q < p) q = doms[q]!;
        }
        idom = p;
      }
      if (doms[b] !== idom) {
        doms[b] = idom;
        changed = true;
      }
    }
  }
  // Back to node ids, in the postorder numbering's array (no longer needed): unreachable nodes stay -1.
  const idom = post.fill(-1);
  for (let i = 0; i < n; i++) idom[nodes[i]!] = nodes[doms[i]!]!;
  return { order: nodes.reverse(), idom };
}
