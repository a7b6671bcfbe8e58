import type { BlockEvent, RawPayload } from './events-block.js';
import { PayloadArena } from './payload-arena.js';
import { TimeHeap } from './time-heap.js';
import type { StreamEventType, TraceEvent } from './trace-event.js';

/** What one held event costs besides its payload: its entries in the slot arrays and in the heap. */
const SLOT_BYTES = 96;
/** Once over budget, events leave until this share of it is held, so that shedding happens in batches. */
const SHED_TO = 0.75;

/**
 * Restores timestamp order for a reader of a whole trace (see EventOrder for the argument), holding
 * each waiting event as raw bytes: its payload in a PayloadArena, the rest in typed arrays. An event
 * is decoded only when it leaves, so what waits costs no garbage-collected objects: holding decoded
 * events for a while makes the collector promote them and lets the heap grow far past what is live.
 *
 * Memory is bounded twice: by the window (events are released `windowNs` after a sequence point
 * passes them) and by `maxBytes`: past it the earliest events leave early, whatever the window, so
 * one very late event cannot make a reader hold the whole trace. An event that arrives after later
 * ones have left is delivered as it comes; the caller counts it as out of order.
 */
export class ReorderWindow {
  private readonly heap = new TimeHeap();
  private readonly arena = new PayloadArena();
  private ts = new Float64Array(0);
  private thread = new Float64Array(0);
  private seq = new Float64Array(0);
  private handle = new Float64Array(0);
  private offset = new Float64Array(0);
  private length = new Int32Array(0);
  private readonly types: (StreamEventType | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private slots = 0;
  private releaseLimit = -Infinity;
  private shedding = false;
  private readonly maxSlots: number;

  constructor(
    private readonly windowNs: number,
    private readonly maxBytes: number,
  ) {
    this.maxSlots = Math.ceil(maxBytes / SLOT_BYTES) + 1;
  }

  private get heldBytes(): number {
    return this.arena.bytes + this.heap.size * SLOT_BYTES;
  }

  /** `payload` is read during the call only. */
  push(e: BlockEvent, payload: RawPayload): void {
    const id = this.freeSlots.pop() ?? this.newSlot();
    this.ts[id] = e.timestampNs;
    this.thread[id] = e.threadId;
    this.seq[id] = e.sequence;
    this.handle[id] = this.arena.store(payload.bytes, payload.start, payload.length);
    this.offset[id] = payload.offset;
    this.length[id] = payload.length;
    this.types[id] = e.type;
    this.heap.push(id, e.timestampNs);
  }

  /** A sequence point at `timeNs`: events more than the window before it can no longer be preceded. */
  release(timeNs: number): void {
    const limit = timeNs - this.windowNs;
    if (limit > this.releaseLimit) this.releaseLimit = limit;
  }

  releaseAll(): void {
    this.releaseLimit = Infinity;
  }

  /** True when next() has an event to give. */
  get ready(): boolean {
    return this.heap.size > 0 && (this.heap.minTimestamp <= this.releaseLimit || this.heldBytes > this.maxBytes);
  }

  /**
   * The earliest event, decoded, if it may leave (released, or shed to get back under the budget); else
   * undefined. With `keepType` it carries its stream type (a BlockEvent), for readers that hand types on.
   */
  next(): TraceEvent | undefined;
  next(keepType: true): BlockEvent | undefined;
  next(keepType = false): TraceEvent | BlockEvent | undefined {
    if (this.heap.size === 0) return undefined;
    if (this.heap.minTimestamp > this.releaseLimit) {
      if (this.heldBytes > this.maxBytes) this.shedding = true;
      else if (this.heldBytes <= this.maxBytes * SHED_TO) this.shedding = false;
      if (!this.shedding) return undefined;
    }
    const id = this.heap.pop();
    const type = this.types[id]!;
    const d = type.descriptor;
    const h = this.handle[id]!;
    const fields = type.decode(this.arena.viewOf(h), this.arena.bytesOf(h), this.arena.offsetOf(h), this.length[id]!, this.offset[id]!);
    this.arena.free(h);
    this.types[id] = undefined;
    this.freeSlots.push(id);
    const timestampNs = this.ts[id]!;
    const threadId = this.thread[id]!;
    const sequence = this.seq[id]!;
    // Two literals, not a spread of one: each keeps one fixed shape (a spread of a decoded event
    // cost half of a batch reader's time).
    if (keepType) return { provider: d.provider, name: d.name, id: d.id, version: d.version, level: d.level, timestampNs, threadId, sequence, fields, type };
    return { provider: d.provider, name: d.name, id: d.id, version: d.version, level: d.level, timestampNs, threadId, sequence, fields };
  }

  private newSlot(): number {
    if (this.slots === this.ts.length) {
      const size = Math.max(this.slots + 1024, Math.min(this.slots * 2, this.maxSlots));
      const grow = <T extends Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
        const b = make(size);
        b.set(a);
        return b;
      };
      const f64 = (n: number) => new Float64Array(n);
      this.ts = grow(this.ts, f64);
      this.thread = grow(this.thread, f64);
      this.seq = grow(this.seq, f64);
      this.handle = grow(this.handle, f64);
      this.offset = grow(this.offset, f64);
      this.length = grow(this.length, (n) => new Int32Array(n));
    }
    return this.slots++;
  }
}
