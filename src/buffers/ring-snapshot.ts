import { align8, METADATA_PART_TYPE_INDEX, METADATA_TYPE_INDEX, RECORD_HEADER_SIZE, SEQUENCE_GAP_TYPE_INDEX } from '../schema/record-abi.js';
import { DescriptionParts } from './description-parts.js';
import type { RecordVisitor } from './chunk-scanner.js';
import { CHUNK_HEADER_BYTES, ChunkF64, ChunkI32, ChunkState, type SessionMemory } from './session-memory.js';

/** One chunk as it was when copied: its records, and whose they were. */
interface ChunkCopy {
  readonly slot: number;
  readonly chunkSeq: number;
  readonly firstSeq: number;
  readonly bytes: Uint8Array;
}

/** One event of a copy, for the merge. */
interface Pending {
  readonly copy: ChunkCopy;
  readonly at: number;
  readonly len: number;
  readonly typeIndex: number;
  readonly timestampMs: number;
  readonly seq: number;
}

/**
 * A ring session's contents at one moment, taken while producers keep writing (and overwriting).
 * Each chunk in use is copied and then checked still to be the same tenant (same state class, owner
 * and chunk sequence): a thief takes a chunk by a compare-and-swap of its state before it writes a
 * byte, so a copy that passes the check is what that tenant committed. A chunk stolen mid-copy is
 * left out, and its events count as overwritten. Nothing is pinned, so producers never wait on a dump.
 */
export class RingSnapshot {
  /** Per slot: the sequence number after the newest event kept. */
  readonly nextSeq: number[] = [];
  private readonly copies: ChunkCopy[][] = [];

  constructor(m: SessionMemory) {
    const i32 = m.i32;
    const slots = m.slotCount;
    for (let s = 0; s < slots; s++) this.copies[s] = [];
    for (let c = 0; c < m.chunkCount; c++) {
      const base = m.chunkBase(c);
      const hi = base >> 2;
      const state = Atomics.load(i32, hi + ChunkI32.State);
      if (state !== ChunkState.Owned && state !== ChunkState.Sealed) continue;
      const slot = i32[hi + ChunkI32.Owner]!;
      const chunkSeq = i32[hi + ChunkI32.ChunkSeq]!;
      const firstSeq = m.f64[(base >> 3) + ChunkF64.FirstSeq]!;
      const committed = Atomics.load(i32, hi + ChunkI32.Committed);
      if (slot < 0 || slot >= slots || committed < base + CHUNK_HEADER_BYTES || committed > base + m.chunkSize) continue;
      const bytes = m.u8.slice(base + CHUNK_HEADER_BYTES, committed);
      const after = Atomics.load(i32, hi + ChunkI32.State);
      if ((after !== ChunkState.Owned && after !== ChunkState.Sealed) || i32[hi + ChunkI32.Owner] !== slot || i32[hi + ChunkI32.ChunkSeq] !== chunkSeq) continue;
      this.copies[slot]!.push({ slot, chunkSeq, firstSeq, bytes });
    }
    for (const list of this.copies) list.sort((a, b) => a.chunkSeq - b.chunkSeq);
  }

  /**
   * Visits every kept record: each thread's metadata first, then all events merged by timestamp
   * across threads (in sequence order within a thread), so a reader needs no reorder window.
   * `clockOf(slot)` turns a thread's timestamps into comparable ones.
   */
  visit(v: RecordVisitor, clockOf: (slot: number) => number): number {
    const events: Pending[][] = [];
    const parts = new DescriptionParts();
    for (const [slot, list] of this.copies.entries()) {
      const mine: Pending[] = [];
      for (const copy of list) {
        const u8 = copy.bytes;
        const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
        let seq = copy.firstSeq;
        for (let r = 0; r + RECORD_HEADER_SIZE <= u8.length; ) {
          const len = dv.getUint32(r, true);
          if (len < RECORD_HEADER_SIZE || r + len > u8.length) break;
          const typeIndex = dv.getUint32(r + 4, true);
          if (typeIndex === METADATA_TYPE_INDEX || typeIndex === METADATA_PART_TYPE_INDEX) {
            parts.add(v, slot, u8, r + RECORD_HEADER_SIZE, len - RECORD_HEADER_SIZE, dv.getFloat64(r + 8, true), typeIndex === METADATA_TYPE_INDEX);
          } else if (typeIndex === SEQUENCE_GAP_TYPE_INDEX) seq++;
          else mine.push({ copy, at: r + RECORD_HEADER_SIZE, len: len - RECORD_HEADER_SIZE, typeIndex, timestampMs: dv.getFloat64(r + 8, true), seq: seq++ });
          r += align8(len);
        }
      }
      events[slot] = mine;
      this.nextSeq[slot] = mine.length ? mine[mine.length - 1]!.seq + 1 : 0;
    }
    // A k-way merge: threads are few, so a linear pick of the earliest head is enough.
    const heads = events.map(() => 0);
    const offsets = events.map((_, slot) => clockOf(slot));
    let visited = 0;
    for (;;) {
      let best = -1;
      let bestTs = Infinity;
      for (let s = 0; s < events.length; s++) {
        const e = events[s]![heads[s]!];
        if (e === undefined) continue;
        const ts = e.timestampMs + offsets[s]!;
        if (ts < bestTs || best < 0) {
          bestTs = ts;
          best = s;
        }
      }
      if (best < 0) return visited;
      const e = events[best]![heads[best]!++]!;
      v.event(best, e.typeIndex, e.timestampMs, e.seq, e.copy.bytes, e.at, e.len);
      visited++;
    }
  }
}
