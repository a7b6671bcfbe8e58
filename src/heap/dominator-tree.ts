/**
 * Immediate dominators by Lengauer–Tarjan (path compression, simple linking: O(E log N)), over typed
 * arrays and without recursion, so millions of nodes take seconds and no stack depth.
 */
export interface DominatorTree {
  /** Nodes reachable from the root, in depth-first preorder (order[0] is the root). */
  readonly order: Int32Array;
  /** Per node: its immediate dominator (the root's is itself), or -1 when unreachable. */
  readonly idom: Int32Array;
}

/**
 * `first`/`to`: the graph's edges in CSR form (node i's edges are first[i] .. first[i+1]); `follow[e]`
 * is 0 for edges that do not retain (weak ones), which the walk ignores.
 */
export function dominatorTree(nodeCount: number, root: number, first: Uint32Array, to: Uint32Array | Uint8Array | Float64Array, follow: Uint8Array): DominatorTree {
  // 1. Depth-first numbering from the root (preorder), with each vertex's DFS-tree parent.
  const dfnum = new Int32Array(nodeCount).fill(-1);
  const vertex = new Int32Array(nodeCount);
  const parent = new Int32Array(nodeCount);
  {
    const stack = new Int32Array(nodeCount);
    const cursor = new Uint32Array(nodeCount);
    let top = 0;
    let n = 0;
    dfnum[root] = n;
    vertex[n++] = root;
    parent[0] = 0;
    stack[top++] = root;
    cursor[root] = first[root]!;
    while (top > 0) {
      const v = stack[top - 1]!;
      const end = first[v + 1]!;
      let e = cursor[v]!;
      let pushed = false;
      while (e < end) {
        const w = to[e]!;
        const f = follow[e]!;
        e++;
        if (f !== 0 && dfnum[w] === -1) {
          cursor[v] = e;
          dfnum[w] = n;
          parent[n] = dfnum[v]!;
          vertex[n++] = w;
          cursor[w] = first[w]!;
          stack[top++] = w;
          pushed = true;
          break;
        }
      }
      if (!pushed) top--;
    }
    return finish(nodeCount, n, dfnum, vertex.subarray(0, n), parent, first, to, follow);
  }
}

function finish(
  nodeCount: number,
  n: number,
  dfnum: Int32Array,
  vertex: Int32Array,
  parent: Int32Array,
  first: Uint32Array,
  to: Uint32Array | Uint8Array | Float64Array,
  follow: Uint8Array,
): DominatorTree {
  // 2. Predecessors among reachable vertices, in DFS numbers (CSR).
  const predStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const v = vertex[i]!;
    for (let e = first[v]!, end = first[v + 1]!; e < end; e++) {
      if (follow[e] === 0) continue;
      const w = dfnum[to[e]!]!;
      if (w > 0) predStart[w + 1]!++;
    }
  }
  for (let i = 0; i < n; i++) predStart[i + 1]! += predStart[i]!;
  const preds = new Int32Array(predStart[n]!);
  const fill = predStart.slice(0, n);
  for (let i = 0; i < n; i++) {
    const v = vertex[i]!;
    for (let e = first[v]!, end = first[v + 1]!; e < end; e++) {
      if (follow[e] === 0) continue;
      const w = dfnum[to[e]!]!;
      if (w > 0) preds[fill[w]!++] = i;
    }
  }

  // 3. Semidominators, in reverse preorder; buckets as linked lists; eval with path compression.
  const semi = new Int32Array(n);
  const idom = new Int32Array(n);
  const ancestor = new Int32Array(n).fill(-1);
  const label = new Int32Array(n);
  const bucket = new Int32Array(n).fill(-1);
  const next = fill; // reused: one bucket link per vertex
  const path = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    semi[i] = i;
    label[i] = i;
  }
  const evaluate = (v: number): number => {
    if (ancestor[v] === -1) return v;
    // compress(v) without recursion: the path up to the linked forest's root, then back down.
    let depth = 0;
    let x = v;
    while (ancestor[ancestor[x]!] !== -1) {
      path[depth++] = x;
      x = ancestor[x]!;
    }
    while (depth > 0) {
      const y = path[--depth]!;
      const a = ancestor[y]!;
      if (semi[label[a]!]! < semi[label[y]!]!) label[y] = label[a]!;
      ancestor[y] = ancestor[a]!;
    }
    return label[v]!;
  };
  for (let w = n - 1; w > 0; w--) {
    for (let k = predStart[w]!, end = predStart[w + 1]!; k < end; k++) {
      const u = evaluate(preds[k]!);
      if (semi[u]! < semi[w]!) semi[w] = semi[u]!;
    }
    const s = semi[w]!;
    next[w] = bucket[s]!;
    bucket[s] = w;
    const p = parent[w]!;
    ancestor[w] = p;
    for (let v = bucket[p]!; v !== -1; v = next[v]!) {
      const u = evaluate(v);
      idom[v] = semi[u]! < semi[v]! ? u : p;
    }
    bucket[p] = -1;
  }
  for (let w = 1; w < n; w++) if (idom[w] !== semi[w]) idom[w] = idom[idom[w]!]!;

  // 4. Back to node ids.
  const result = new Int32Array(nodeCount).fill(-1);
  for (let i = 0; i < n; i++) result[vertex[i]!] = vertex[idom[i]!]!;
  return { order: vertex, idom: result };
}
