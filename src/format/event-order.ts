import type { BlockEvent } from './events-block.js';
import { TimeHeap } from './time-heap.js';

/**
 * Restores timestamp order across threads, for decoded events. Events wait until a sequence point
 * proves nothing earlier can still arrive: after a sequence point at time D, every later event has a
 * timestamp ≥ D − maxLateness (the drain measures lateness and the end-of-stream block records the
 * maximum). Ties keep arrival order. Readers of whole traces use ReorderWindow, which holds raw bytes.
 */
export class EventOrder {
  private readonly heap = new TimeHeap();
  private readonly held: (BlockEvent | undefined)[] = [];
  private readonly freeIds: number[] = [];

  constructor(private readonly windowNs: number) {}

  push(e: BlockEvent): void {
    const id = this.freeIds.pop() ?? this.held.length;
    this.held[id] = e;
    this.heap.push(id, e.timestampNs);
  }

  /** Events that can no longer be preceded by anything, given a sequence point at `timeNs`. */
  release(timeNs: number, out: BlockEvent[]): void {
    const limit = timeNs - this.windowNs;
    while (this.heap.minTimestamp <= limit) out.push(this.pop());
  }

  releaseAll(out: BlockEvent[]): void {
    while (this.heap.size > 0) out.push(this.pop());
  }

  private pop(): BlockEvent {
    const id = this.heap.pop();
    const e = this.held[id]!;
    this.held[id] = undefined;
    this.freeIds.push(id);
    return e;
  }
}
