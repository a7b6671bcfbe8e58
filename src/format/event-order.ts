import type { BlockEvent } from './events-block.js';

/**
 * Restores timestamp order across threads. Events wait in a min-heap until a sequence point proves
 * nothing earlier can still arrive: after a sequence point at time D, every later event has a
 * timestamp ≥ D − maxLateness (the drain measures lateness and the end-of-stream block records the
 * maximum). Ties keep arrival order.
 */
export class EventOrder {
  private heap: BlockEvent[] = [];
  private order: number[] = [];
  private arrivals = 0;

  constructor(private readonly windowNs: number) {}

  push(e: BlockEvent): void {
    const h = this.heap;
    const o = this.order;
    let i = h.length;
    h.push(e);
    o.push(this.arrivals++);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Events that can no longer be preceded by anything, given a sequence point at `timeNs`. */
  release(timeNs: number, out: BlockEvent[]): void {
    const limit = timeNs - this.windowNs;
    while (this.heap.length > 0 && this.heap[0]!.timestampNs <= limit) out.push(this.pop());
  }

  releaseAll(out: BlockEvent[]): void {
    while (this.heap.length > 0) out.push(this.pop());
  }

  private pop(): BlockEvent {
    const h = this.heap;
    const o = this.order;
    const top = h[0]!;
    const last = h.pop()!;
    const lastOrder = o.pop()!;
    if (h.length > 0) {
      h[0] = last;
      o[0] = lastOrder;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(l, m)) m = l;
        if (r < h.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const ta = this.heap[a]!.timestampNs;
    const tb = this.heap[b]!.timestampNs;
    return ta < tb || (ta === tb && this.order[a]! < this.order[b]!);
  }

  private swap(a: number, b: number): void {
    const h = this.heap;
    const o = this.order;
    const t = h[a]!;
    h[a] = h[b]!;
    h[b] = t;
    const u = o[a]!;
    o[a] = o[b]!;
    o[b] = u;
  }
}
