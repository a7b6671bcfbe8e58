/**
 * Sets of time as sorted, disjoint, non-empty intervals [start, end), flat: start0, end0, start1, …
 * Timestamps are integer nanoseconds, so lengths add up exactly.
 */
export type Intervals = readonly number[];

/** The total length of a set. */
export function measure(set: Intervals): number {
  let n = 0;
  for (let i = 0; i < set.length; i += 2) n += set[i + 1]! - set[i]!;
  return n;
}

/** Collects intervals in any order, overlapping or not; `within` gives their union clipped to a range. */
export class IntervalUnion {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  get size(): number {
    return this.starts.length;
  }

  add(startNs: number, endNs: number): void {
    if (endNs <= startNs) return;
    this.starts.push(startNs);
    this.ends.push(endNs);
  }

  within(fromNs: number, toNs: number): number[] {
    const order = this.starts.map((_, i) => i).sort((a, b) => this.starts[a]! - this.starts[b]!);
    const out: number[] = [];
    for (const i of order) {
      const s = Math.max(fromNs, this.starts[i]!);
      const e = Math.min(toNs, this.ends[i]!);
      if (e <= s) continue;
      const last = out.length - 1;
      if (last > 0 && s <= out[last]!) out[last] = Math.max(out[last]!, e);
      else out.push(s, e);
    }
    return out;
  }
}

/**
 * Splits `remaining` by `cover`: how much of it `cover` takes, and what is left. One merge over both
 * sorted lists; the taken and the left add up to `remaining` exactly.
 */
export function claim(remaining: Intervals, cover: Intervals): { taken: number; left: number[] } {
  const left: number[] = [];
  let taken = 0;
  let j = 0;
  for (let i = 0; i < remaining.length; i += 2) {
    let s = remaining[i]!;
    const e = remaining[i + 1]!;
    while (j < cover.length && cover[j + 1]! <= s) j += 2;
    for (let k = j; k < cover.length && cover[k]! < e; k += 2) {
      const cs = Math.max(s, cover[k]!);
      const ce = Math.min(e, cover[k + 1]!);
      if (cs > s) left.push(s, cs);
      taken += ce - cs;
      s = ce;
    }
    if (s < e) left.push(s, e);
  }
  return { taken, left };
}
