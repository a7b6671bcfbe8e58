/**
 * A min-heap of ids by timestamp; equal timestamps keep the order they were pushed in. Keys live in
 * typed arrays, so holding many entries costs no garbage-collected objects.
 */
export class TimeHeap {
  private ts = new Float64Array(64);
  private arrival = new Float64Array(64);
  private ids = new Int32Array(64);
  private n = 0;
  private arrivals = 0;

  get size(): number {
    return this.n;
  }

  /** The earliest timestamp held, or Infinity when empty. */
  get minTimestamp(): number {
    return this.n > 0 ? this.ts[0]! : Infinity;
  }

  push(id: number, timestampNs: number): void {
    if (this.n === this.ids.length) this.grow();
    let i = this.n++;
    const a = this.arrivals++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.ts[parent]! <= timestampNs) break; // an equal one arrived earlier: it stays first
      this.move(parent, i);
      i = parent;
    }
    this.set(i, timestampNs, a, id);
  }

  /** Removes and returns the earliest id; the heap must not be empty. */
  pop(): number {
    const top = this.ids[0]!;
    const n = --this.n;
    if (n === 0) return top;
    const t = this.ts[n]!;
    const a = this.arrival[n]!;
    const id = this.ids[n]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && this.before(r, l) ? r : l;
      const mt = this.ts[m]!;
      if (t < mt || (t === mt && a < this.arrival[m]!)) break;
      this.move(m, i);
      i = m;
    }
    this.set(i, t, a, id);
    return top;
  }

  private before(x: number, y: number): boolean {
    const tx = this.ts[x]!;
    const ty = this.ts[y]!;
    return tx < ty || (tx === ty && this.arrival[x]! < this.arrival[y]!);
  }

  private move(from: number, to: number): void {
    this.set(to, this.ts[from]!, this.arrival[from]!, this.ids[from]!);
  }

  private set(i: number, t: number, a: number, id: number): void {
    this.ts[i] = t;
    this.arrival[i] = a;
    this.ids[i] = id;
  }

  private grow(): void {
    const size = this.ids.length * 2;
    const ts = new Float64Array(size);
    const arrival = new Float64Array(size);
    const ids = new Int32Array(size);
    ts.set(this.ts);
    arrival.set(this.arrival);
    ids.set(this.ids);
    this.ts = ts;
    this.arrival = arrival;
    this.ids = ids;
  }
}
