import type { BlockEvent } from './events-block.js';

/** Events that arrived one after another with non-decreasing timestamps; `head` is the next one out. */
interface Run {
  events: BlockEvent[];
  head: number;
  /** Arrival number of events[0]: a run's events arrived consecutively. */
  firstArrival: number;
  lastTs: number;
}

/**
 * Restores timestamp order across threads. Events wait until a sequence point proves nothing earlier
 * can still arrive: after a sequence point at time D, every later event has a timestamp ≥ D −
 * maxLateness (the drain measures lateness and the end-of-stream block records the maximum). Ties
 * keep arrival order.
 *
 * Most events arrive already in order (a thread's chunk, then the next thread's), so they are kept as
 * runs of ascending timestamps and merged with a min-heap of runs: an event costs O(log runs), and O(1)
 * when one run is pending, instead of O(log events) for a heap of events.
 */
export class EventOrder {
  private heap: Run[] = [];
  /** The run that arrivals extend while their timestamps do not go back. */
  private current: Run | undefined;
  private arrivals = 0;

  constructor(private readonly windowNs: number) {}

  push(e: BlockEvent): void {
    const ts = e.timestampNs;
    const cur = this.current;
    this.arrivals++;
    if (cur !== undefined && ts >= cur.lastTs) {
      cur.events.push(e);
      cur.lastTs = ts;
      return;
    }
    const run: Run = { events: [e], head: 0, firstArrival: this.arrivals - 1, lastTs: ts };
    this.current = run;
    const h = this.heap;
    let i = h.length;
    h.push(run);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(run, h[parent]!)) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = run;
  }

  /** Events that can no longer be preceded by anything, given a sequence point at `timeNs`. */
  release(timeNs: number, out: BlockEvent[]): void {
    this.releaseUpTo(timeNs - this.windowNs, out);
  }

  releaseAll(out: BlockEvent[]): void {
    this.releaseUpTo(Infinity, out);
  }

  private releaseUpTo(limit: number, out: BlockEvent[]): void {
    const h = this.heap;
    while (h.length > 0) {
      const top = h[0]!;
      const events = top.events;
      const next = h.length > 1 ? this.runnerUp() : undefined;
      // Take from the top run for as long as it stays ahead of every other run.
      let i = top.head;
      for (; i < events.length; i++) {
        const e = events[i]!;
        if (e.timestampNs > limit) break;
        if (next !== undefined && !headBefore(e.timestampNs, top.firstArrival + i, next)) break;
        out.push(e);
      }
      top.head = i;
      if (i === events.length) {
        this.removeTop();
        if (top === this.current) this.current = undefined;
        continue;
      }
      if (i * 2 >= events.length && i > 1024) {
        // Let go of what was delivered, so a long-lived run holds only what is pending.
        events.copyWithin(0, i);
        events.length -= i;
        top.firstArrival += i;
        top.head = 0;
      }
      if (h.length > 1) this.siftDown(0);
      const first = h[0]!;
      if (first.events[first.head]!.timestampNs > limit) return;
    }
  }

  /** The smaller of the top's children: the run that comes next once the top falls behind. */
  private runnerUp(): Run {
    const h = this.heap;
    return h.length > 2 && before(h[2]!, h[1]!) ? h[2]! : h[1]!;
  }

  private removeTop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    this.siftDown(0);
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const run = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const m = r < h.length && before(h[r]!, h[l]!) ? r : l;
      if (!before(h[m]!, run)) break;
      h[i] = h[m]!;
      i = m;
    }
    h[i] = run;
  }
}

/** Whether an event (timestamp, arrival) goes out before the head of `b`. */
function headBefore(ts: number, arrival: number, b: Run): boolean {
  const tb = b.events[b.head]!.timestampNs;
  return ts < tb || (ts === tb && arrival < b.firstArrival + b.head);
}

function before(a: Run, b: Run): boolean {
  return headBefore(a.events[a.head]!.timestampNs, a.firstArrival + a.head, b);
}
