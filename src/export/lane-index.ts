/**
 * A number per lane (0, 1, 2, …; -1 until set) and the lowest lane whose number is below a bound, in
 * O(log lanes): a minimum tree over the lanes, doubled when the last lane comes into use, so there is
 * always a lane never set (-1) above every lane in use.
 */
export class LaneIndex {
  /** tree[1] is the root; lane i is leaf `size + i`; each node holds the minimum of its two children. */
  private tree = new Float64Array(2 * 8).fill(-1);
  private size = 8;

  get(lane: number): number {
    return this.tree[this.size + lane]!;
  }

  set(lane: number, value: number): void {
    if (lane >= this.size - 1) this.grow(lane + 2);
    const t = this.tree;
    let i = this.size + lane;
    t[i] = value;
    for (i >>= 1; i >= 1; i >>= 1) t[i] = Math.min(t[2 * i]!, t[2 * i + 1]!);
  }

  /** The lowest lane from `from` on whose number is below `bound` (> -1, so a lane never set always qualifies). */
  lowestBelow(bound: number, from = 0): number {
    const t = this.tree;
    let i = this.size + from;
    // Up until a subtree to the right holds one (the last lane is never set: one always does)...
    while (!(t[i]! < bound)) {
      while (i & 1) i >>= 1;
      i++;
    }
    // ...then down to its lowest such lane.
    while (i < this.size) i = t[2 * i]! < bound ? 2 * i : 2 * i + 1;
    return i - this.size;
  }

  private grow(lanes: number): void {
    let size = this.size;
    while (size < lanes) size *= 2;
    const t = new Float64Array(2 * size).fill(-1);
    t.set(this.tree.subarray(this.size, 2 * this.size), size);
    for (let i = size - 1; i >= 1; i--) t[i] = Math.min(t[2 * i]!, t[2 * i + 1]!);
    this.tree = t;
    this.size = size;
  }
}
