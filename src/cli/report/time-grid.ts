import type { TimeSeries } from './report-page-data.js';

/** Buckets a series keeps at most: a chart a few thousand pixels wide shows no more. */
export const MAX_BUCKETS = 2048;
const FIRST_WIDTH_NS = 1e6;

interface Member {
  /** Merges each pair of buckets: the grid's width doubled. */
  halve(): void;
}

/**
 * Time buckets shared by a chart's series, whose width doubles as the trace grows: any trace
 * length fits in MAX_BUCKETS buckets, so memory stays bounded, and no series needs the trace's
 * length in advance.
 */
export class TimeGrid {
  widthNs = FIRST_WIDTH_NS;
  private readonly members: Member[] = [];

  join<T extends Member>(member: T): T {
    this.members.push(member);
    return member;
  }

  /** The bucket of a time (ns since the trace origin; a time before it goes in the first bucket). */
  bucket(tNs: number): number {
    let b = Math.floor(Math.max(0, tNs) / this.widthNs);
    while (b >= MAX_BUCKETS) {
      this.widthNs *= 2;
      for (const m of this.members) m.halve();
      b = Math.floor(Math.max(0, tNs) / this.widthNs);
    }
    return b;
  }
}

/** Events counted per bucket. */
export class CountSeries implements Member {
  readonly counts: number[] = [];

  constructor(private readonly grid: TimeGrid) {}

  add(tNs: number): void {
    const b = this.grid.bucket(tNs);
    while (this.counts.length <= b) this.counts.push(0);
    this.counts[b]!++;
  }

  halve(): void {
    const c = this.counts;
    for (let i = 0; i < c.length; i += 2) c[i >> 1] = c[i]! + (c[i + 1] ?? 0);
    c.length = Math.ceil(c.length / 2);
  }
}

/** A sampled figure: per bucket its minimum and maximum and when they were seen (min/max downsampling keeps every spike). */
export class MinMaxSeries implements Member {
  private readonly minT: number[] = [];
  private readonly min: number[] = [];
  private readonly maxT: number[] = [];
  private readonly max: number[] = [];

  constructor(
    private readonly grid: TimeGrid,
    readonly name: string,
  ) {}

  add(tNs: number, v: number): void {
    if (!Number.isFinite(v)) return;
    const b = this.grid.bucket(tNs);
    while (this.min.length <= b) {
      this.min.push(NaN);
      this.minT.push(NaN);
      this.max.push(NaN);
      this.maxT.push(NaN);
    }
    if (!(v >= this.min[b]!)) {
      this.min[b] = v;
      this.minT[b] = tNs;
    }
    if (!(v <= this.max[b]!)) {
      this.max[b] = v;
      this.maxT[b] = tNs;
    }
  }

  halve(): void {
    const n = Math.ceil(this.min.length / 2);
    for (let o = 0; o < n; o++) {
      const i = 2 * o;
      const j = i + 1;
      // An empty bucket (NaN) gives way to its neighbour.
      const lo = j < this.min.length && (Number.isNaN(this.min[i]!) || this.min[j]! < this.min[i]!) ? j : i;
      const hi = j < this.max.length && (Number.isNaN(this.max[i]!) || this.max[j]! > this.max[i]!) ? j : i;
      this.min[o] = this.min[lo]!;
      this.minT[o] = this.minT[lo]!;
      this.max[o] = this.max[hi]!;
      this.maxT[o] = this.maxT[hi]!;
    }
    this.min.length = this.minT.length = this.max.length = this.maxT.length = n;
  }

  /** The points, in time order, `scale` applied to the values (e.g. bytes to MB). */
  series(scale = 1): TimeSeries {
    const x: number[] = [];
    const y: number[] = [];
    for (let b = 0; b < this.min.length; b++) {
      if (Number.isNaN(this.min[b]!)) continue;
      const points = this.minT[b]! <= this.maxT[b]! ? [[this.minT[b]!, this.min[b]!], [this.maxT[b]!, this.max[b]!]] : [[this.maxT[b]!, this.max[b]!], [this.minT[b]!, this.min[b]!]];
      for (const [t, v] of points) {
        if (x.length > 0 && x[x.length - 1] === t / 1e9 && y[y.length - 1] === v! * scale) continue;
        x.push(t! / 1e9);
        y.push(v! * scale);
      }
    }
    return { name: this.name, x, y };
  }
}
