import { type RetainingEdges, retains } from './dominator-tree.js';

/**
 * Why an object is alive: the shortest paths to it from the root over retaining edges (weak edges
 * excluded, shortcuts only from the root, as for dominators), found by one breadth-first search.
 * Each node keeps the edge that first reached it, so one shortest path to any node is a walk back;
 * distinct paths go through distinct immediate retainers, from the predecessor lists built on first use.
 */
export class RetainerPaths {
  /** Per node: edges from the root on a shortest path, or -1 when unreachable. */
  readonly distance: Int32Array;
  /** Per node: the edge that first reached it (-1: the root, or unreachable). */
  private readonly via: Int32Array;
  private predStart: Int32Array | undefined;
  private predEdges: Int32Array | undefined;

  constructor(
    private readonly nodeCount: number,
    private readonly root: number,
    private readonly g: RetainingEdges,
  ) {
    const { first, to } = g;
    const distance = new Int32Array(nodeCount).fill(-1);
    const via = new Int32Array(nodeCount).fill(-1);
    const queue = new Int32Array(nodeCount);
    let head = 0;
    let tail = 0;
    distance[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
      const v = queue[head++]!;
      const d = distance[v]! + 1;
      for (let e = first[v]!, end = first[v + 1]!; e < end; e++) {
        const w = to[e]!;
        if (distance[w] !== -1 || !retains(g, root, v, e)) continue;
        distance[w] = d;
        via[w] = e;
        queue[tail++] = w;
      }
    }
    this.distance = distance;
    this.via = via;
  }

  /** The node edge e leaves (a binary search of the CSR offsets). */
  source(e: number): number {
    const { first } = this.g;
    let lo = 0;
    let hi = this.nodeCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (first[mid]! <= e) lo = mid;
      else hi = mid - 1;
    }
    // The last node whose edges start at or before e (nodes without edges before it share its offset).
    return lo;
  }

  /** The edges of one shortest path from the root to v ([] for the root, undefined when unreachable). */
  shortest(v: number): number[] | undefined {
    if (this.distance[v] === -1) return undefined;
    const path: number[] = [];
    for (let u = v; u !== this.root; ) {
      const e = this.via[u]!;
      path.push(e);
      u = this.source(e);
    }
    return path.reverse();
  }

  /**
   * Up to `k` shortest paths to v, each through a different immediate retainer, shortest first: the
   * paths DevTools' Retainers panel would open, one per retainer.
   */
  distinct(v: number, k: number): number[][] {
    if (this.distance[v]! <= 0) return this.distance[v] === 0 ? [[]] : [];
    const { start, edges } = this.predecessors();
    const retainers: { e: number; from: number; d: number }[] = [];
    for (let i = start[v]!, end = start[v + 1]!; i < end; i++) {
      const e = edges[i]!;
      const from = this.source(e);
      retainers.push({ e, from, d: this.distance[from]! });
    }
    retainers.sort((a, b) => a.d - b.d || a.e - b.e);
    const seen = new Set<number>();
    const paths: number[][] = [];
    for (const r of retainers) {
      if (paths.length >= k) break;
      if (seen.has(r.from) || r.from === v) continue;
      seen.add(r.from);
      paths.push([...this.shortest(r.from)!, r.e]);
    }
    return paths;
  }

  /** Retaining edges into each node from reachable nodes (CSR of edge indexes). */
  private predecessors(): { start: Int32Array; edges: Int32Array } {
    if (this.predStart && this.predEdges) return { start: this.predStart, edges: this.predEdges };
    const { first, to } = this.g;
    const n = this.nodeCount;
    const start = new Int32Array(n + 1);
    const each = (visit: (w: number, e: number) => void): void => {
      for (let v = 0; v < n; v++) {
        if (this.distance[v] === -1) continue;
        for (let e = first[v]!, end = first[v + 1]!; e < end; e++) if (retains(this.g, this.root, v, e)) visit(to[e]!, e);
      }
    };
    each((w) => start[w]!++);
    for (let i = 1; i <= n; i++) start[i]! += start[i - 1]!;
    const edges = new Int32Array(start[n]!);
    each((w, e) => (edges[--start[w]!] = e));
    this.predStart = start;
    this.predEdges = edges;
    return { start, edges };
  }
}
