import { align8, METADATA_PART_TYPE_INDEX, METADATA_TYPE_INDEX, RECORD_HEADER_SIZE, SEQUENCE_GAP_TYPE_INDEX } from '../schema/record-abi.js';
import type { RecordVisitor } from './chunk-scanner.js';
import { DescriptionParts } from './description-parts.js';
import { CHUNK_HEADER_BYTES, ChunkF64, ChunkI32, ChunkState, type SessionMemory } from './session-memory.js';

/** A chunk in use when the snapshot was taken, and how far its tenant had committed then. */
interface ListedChunk {
  readonly chunk: number;
  readonly chunkSeq: number;
  readonly firstSeq: number;
  readonly committed: number;
}

/** One thread's place in the merge: the chunk copied last, and its next event. */
class SlotCursor {
  /** The copy of the current chunk's records (one buffer, reused for each chunk). */
  private readonly copy: Uint8Array;
  private readonly view: DataView;
  /** A description in parts (larger than a chunk's room) is put back together before it is visited. */
  private readonly parts = new DescriptionParts();
  private next = 0;
  private pos = 0;
  private end = 0;
  private seq = 0;
  /** The next event, or done when the thread has none left. */
  done = false;
  at = 0;
  len = 0;
  typeIndex = 0;
  timestampMs = 0;
  eventSeq = 0;
  /** The head's timestamp on the common clock. */
  sortKey = 0;

  constructor(
    private readonly m: SessionMemory,
    readonly slot: number,
    private readonly chunks: readonly ListedChunk[],
    private readonly offsetMs: number,
  ) {
    this.copy = new Uint8Array(m.chunkSize - CHUNK_HEADER_BYTES);
    this.view = new DataView(this.copy.buffer);
  }

  /** The sequence number after the last event this thread had committed. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Moves to the next event, visiting the metadata records on the way. */
  advance(v: RecordVisitor): void {
    for (;;) {
      while (this.pos + RECORD_HEADER_SIZE <= this.end) {
        const r = this.pos;
        const len = this.view.getUint32(r, true);
        if (len < RECORD_HEADER_SIZE || r + len > this.end) break;
        this.pos = r + align8(len);
        const typeIndex = this.view.getUint32(r + 4, true);
        if (typeIndex === METADATA_TYPE_INDEX || typeIndex === METADATA_PART_TYPE_INDEX) {
          this.parts.add(v, this.slot, this.copy, r + RECORD_HEADER_SIZE, len - RECORD_HEADER_SIZE, this.view.getFloat64(r + 8, true), typeIndex === METADATA_TYPE_INDEX);
          continue;
        }
        if (typeIndex === SEQUENCE_GAP_TYPE_INDEX) {
          this.seq++;
          continue;
        }
        this.at = r + RECORD_HEADER_SIZE;
        this.len = len - RECORD_HEADER_SIZE;
        this.typeIndex = typeIndex;
        this.timestampMs = this.view.getFloat64(r + 8, true);
        this.eventSeq = this.seq++;
        this.sortKey = this.timestampMs + this.offsetMs;
        return;
      }
      if (!this.load()) {
        this.done = true;
        return;
      }
    }
  }

  /** The head's payload, valid until the next advance. */
  get bytes(): Uint8Array {
    return this.copy;
  }

  /**
   * Copies the next listed chunk that still has the tenant it had when listed. A thief takes a chunk
   * by a compare-and-swap of its state before it writes a byte, so a copy that passes the check is
   * what that tenant committed; a chunk taken since is skipped, and its events show as a gap.
   */
  private load(): boolean {
    const { i32, u8, chunkSize } = this.m;
    while (this.next < this.chunks.length) {
      const c = this.chunks[this.next++]!;
      const base = this.m.chunkBase(c.chunk);
      const hi = base >> 2;
      const n = c.committed - base - CHUNK_HEADER_BYTES;
      if (n < 0 || n > chunkSize - CHUNK_HEADER_BYTES) continue;
      this.copy.set(u8.subarray(base + CHUNK_HEADER_BYTES, c.committed));
      const after = Atomics.load(i32, hi + ChunkI32.State);
      if ((after !== ChunkState.Owned && after !== ChunkState.Sealed) || i32[hi + ChunkI32.Owner] !== this.slot || i32[hi + ChunkI32.ChunkSeq] !== c.chunkSeq) continue;
      this.pos = 0;
      this.end = n;
      this.seq = c.firstSeq;
      return true;
    }
    return false;
  }
}

/**
 * A ring session's contents as they were at one moment, read while producers keep writing (and
 * overwriting), in bounded memory: the chunks in use and how far each was committed are listed at
 * once; each thread's chunks are then copied one at a time, in its chunk order, as the merge needs
 * them (one chunk-sized buffer per thread). A chunk that a thief took before its turn is left out,
 * and its events count as overwritten. Nothing is pinned, so producers never wait on a dump.
 */
export class RingSnapshot {
  private readonly cursors: SlotCursor[] = [];
  private started = false;

  /** `clockOf(slot)` turns a thread's timestamps into comparable ones. */
  constructor(m: SessionMemory, clockOf: (slot: number) => number) {
    const i32 = m.i32;
    const slots = m.slotCount;
    const listed: ListedChunk[][] = [];
    for (let c = 0; c < m.chunkCount; c++) {
      const base = m.chunkBase(c);
      const hi = base >> 2;
      const state = Atomics.load(i32, hi + ChunkI32.State);
      if (state !== ChunkState.Owned && state !== ChunkState.Sealed) continue;
      const slot = i32[hi + ChunkI32.Owner]!;
      const chunkSeq = i32[hi + ChunkI32.ChunkSeq]!;
      const firstSeq = m.f64[(base >> 3) + ChunkF64.FirstSeq]!;
      const committed = Atomics.load(i32, hi + ChunkI32.Committed);
      if (slot < 0 || slot >= slots) continue;
      (listed[slot] ??= []).push({ chunk: c, chunkSeq, firstSeq, committed });
    }
    for (const [slot, chunks] of listed.entries()) {
      if (chunks === undefined) continue;
      chunks.sort((a, b) => a.chunkSeq - b.chunkSeq);
      this.cursors.push(new SlotCursor(m, slot, chunks, clockOf(slot)));
    }
  }

  /** Per slot, the sequence number after the newest event visited so far (0 for none). */
  nextSeq(slot: number): number {
    return this.cursors.find((c) => c.slot === slot)?.nextSeq ?? 0;
  }

  /**
   * Visits the records in order, each thread's metadata before the events that use it, and the
   * events merged by timestamp across threads (in sequence order within a thread), so a reader needs
   * no reorder window. Stops once `more()` says so after an event; returns true when all are visited.
   */
  visit(v: RecordVisitor, more: () => boolean): boolean {
    const cursors = this.cursors;
    if (!this.started) {
      this.started = true;
      for (const c of cursors) c.advance(v);
    }
    // A k-way merge: threads are few, so a linear pick of the earliest head is enough.
    for (;;) {
      let best: SlotCursor | undefined;
      for (const c of cursors) if (!c.done && (best === undefined || c.sortKey < best.sortKey)) best = c;
      if (best === undefined) return true;
      v.event(best.slot, best.typeIndex, best.timestampMs, best.eventSeq, best.bytes, best.at, best.len);
      best.advance(v);
      if (!more()) return false;
    }
  }
}
