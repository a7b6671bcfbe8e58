import { align8, METADATA_PART_TYPE_INDEX, METADATA_TYPE_INDEX, RECORD_HEADER_SIZE, SEQUENCE_GAP_TYPE_INDEX } from '../schema/record-abi.js';
import { DescriptionParts } from './description-parts.js';
import { FairQueue } from './fair-queue.js';
import { CHUNK_HEADER_BYTES, ChunkF64, ChunkI32, ChunkState, Ctl, DROP_REASONS, type SessionMemory, SlotF64, SlotI32, SlotState } from './session-memory.js';

export interface RecordVisitor {
  /** A type's description: `u8[start, start+len)` is a varint type index followed by a descriptor. */
  metadata(slot: number, u8: Uint8Array, start: number, len: number): void;
  /** An event record; its payload is `u8[start, start+len)`. */
  event(slot: number, typeIndex: number, timestampMs: number, seq: number, u8: Uint8Array, start: number, len: number): void;
}

export interface SlotProgress {
  readonly slot: number;
  readonly threadId: number;
  readonly nextSeq: number;
  readonly dropped: number;
  readonly originDeltaNs: number;
  /** Drops by reason, in DROP_REASONS order. */
  readonly droppedByReason: readonly number[];
  /** Block mode: how often this thread parked, and its longest wait. */
  readonly parks: number;
  readonly longestParkNs: number;
  /** The thread was reclaimed after it died (a terminated worker). */
  readonly dead: boolean;
  /** The thread is inside its slow path (taking a chunk, parked, dropping) right now. */
  readonly inSlowPath: boolean;
  /** The thread has not yet closed the session (heard of its stop): it may still write into the chunk it holds. */
  readonly open: boolean;
  /** The thread's kernel id (0: unknown). */
  readonly osThreadId: number;
}

/**
 * The drain's side of the buffer: visits every committed record, thread by thread in each thread's
 * chunk order, and returns sealed chunks to the budget once read (waking the first parked producer).
 * Only the drain thread uses it.
 */
export class ChunkScanner {
  private readonly nextChunkSeq: Int32Array;
  private readonly current: Int32Array;
  private readonly consumed: Int32Array;
  private readonly nextSeq: Float64Array;
  /** The drain's watch on the wait line's head. */
  readonly queue: FairQueue;
  private readonly bySlot: number[][] = [];
  private readonly parts = new DescriptionParts();
  /**
   * Ctl.ChunksTaken when bySlot was built: while it is unchanged no producer has taken a chunk, so
   * bySlot still lists every chunk in use and a pass need not walk the whole chunk table (slow in a
   * loop that runs ten times a second, so never gets optimised: ~0.3 ms for 1,024 chunks).
   */
  private takenAtWalk = -1;

  constructor(private readonly m: SessionMemory) {
    this.nextChunkSeq = new Int32Array(m.maxSlots);
    this.current = new Int32Array(m.maxSlots).fill(-1);
    this.consumed = new Int32Array(m.maxSlots);
    this.nextSeq = new Float64Array(m.maxSlots);
    this.queue = new FairQueue(m);
  }

  /** One pass over everything committed so far; returns the number of records visited. */
  scan(v: RecordVisitor): number {
    const m = this.m;
    const i32 = m.i32;
    // ChunksTaken before the slot count: a thread that takes its slot and first chunk after this load
    // bumps ChunksTaken, so the next pass walks again; one that did so before it is within `slots`.
    const taken = Atomics.load(i32, Ctl.ChunksTaken);
    const slots = m.slotCount;
    if (taken !== this.takenAtWalk) {
      // Read before the walk: a chunk taken during it makes the next pass walk again.
      this.takenAtWalk = taken;
      for (let s = 0; s < slots; s++) (this.bySlot[s] ??= []).length = 0;
      // Plain loads suffice after the atomic read above: every chunk counted in `taken` is set up.
      const stride = m.chunkSize >> 2;
      for (let c = 0, hi = m.chunkBase(0) >> 2; c < m.chunkCount; c++, hi += stride) {
        const state = i32[hi + ChunkI32.State];
        if (state !== ChunkState.Owned && state !== ChunkState.Sealed) continue;
        const owner = i32[hi + ChunkI32.Owner]!;
        if (owner >= 0 && owner < slots) this.bySlot[owner]!.push(c);
      }
    }
    let visited = 0;
    for (let s = 0; s < slots; s++) visited += this.drainSlot(s, v);
    return visited;
  }

  private drainSlot(s: number, v: RecordVisitor): number {
    const m = this.m;
    const { i32, u32, f64, u8 } = m;
    // A slot claimed after the last walk has taken no chunk yet, or the walk would have run.
    const chunks = this.bySlot[s] ?? [];
    let visited = 0;
    for (;;) {
      let c = this.current[s]!;
      if (c < 0) {
        const want = this.nextChunkSeq[s]!;
        // The list is from the start of the pass: a chunk freed since may now belong to another thread.
        c = chunks.find((k) => {
          const hi = m.chunkBase(k) >> 2;
          const state = Atomics.load(i32, hi + ChunkI32.State);
          return (state === ChunkState.Owned || state === ChunkState.Sealed) && i32[hi + ChunkI32.Owner] === s && i32[hi + ChunkI32.ChunkSeq] === want;
        }) ?? -1;
        if (c < 0) return visited;
        this.current[s] = c;
        this.consumed[s] = m.chunkBase(c) + CHUNK_HEADER_BYTES;
        this.nextSeq[s] = f64[(m.chunkBase(c) >> 3) + ChunkF64.FirstSeq]!;
      }
      const base = m.chunkBase(c);
      const hi = base >> 2;
      const state = Atomics.load(i32, hi + ChunkI32.State);
      const committed = Atomics.load(i32, hi + ChunkI32.Committed);
      const limit = base + m.chunkSize;
      let r = this.consumed[s]!;
      let seq = this.nextSeq[s]!;
      while (r < committed) {
        const len = u32[r >> 2]!;
        if (len < RECORD_HEADER_SIZE || r + len > Math.min(committed, limit)) {
          // Cannot happen with a correct producer; never trust shared memory blindly though. A chunk
          // still being written is read again next pass; a sealed one is abandoned, and the events
          // lost with it show as a sequence gap (counted as dropped) when the next chunk starts.
          if (state !== ChunkState.Sealed) {
            // What was read so far is in the stream: the next pass goes on from here, not again.
            this.consumed[s] = r;
            this.nextSeq[s] = seq;
            return visited;
          }
          r = committed;
          break;
        }
        const type = u32[(r >> 2) + 1]!;
        if (type === METADATA_TYPE_INDEX || type === METADATA_PART_TYPE_INDEX) {
          this.parts.add(v, s, u8, r + RECORD_HEADER_SIZE, len - RECORD_HEADER_SIZE, f64[(r >> 3) + 1]!, type === METADATA_TYPE_INDEX);
        } else if (type === SEQUENCE_GAP_TYPE_INDEX) {
          seq++;
        } else {
          v.event(s, type, f64[(r >> 3) + 1]!, seq++, u8, r + RECORD_HEADER_SIZE, len - RECORD_HEADER_SIZE);
          visited++;
        }
        r += align8(len);
      }
      this.consumed[s] = r;
      this.nextSeq[s] = seq;
      if (state !== ChunkState.Sealed) return visited;
      this.current[s] = -1;
      this.nextChunkSeq[s]++;
      m.releaseChunk(c);
      this.queue.wakeHead();
    }
  }

  /** What each producing thread has attempted and dropped, as far as the drain can tell. */
  progress(): SlotProgress[] {
    const m = this.m;
    const out: SlotProgress[] = [];
    for (let s = 0; s < m.slotCount; s++) {
      // A slot is counted before its owner has filled it in; its state is stored last.
      const state = Atomics.load(m.i32, m.slotI32(s, SlotI32.State));
      if (state === SlotState.Claiming) continue;
      const published = m.f64[m.slotF64(s, SlotF64.NextSeq)]!;
      out.push({
        slot: s,
        threadId: m.i32[m.slotI32(s, SlotI32.ThreadId)]!,
        nextSeq: Math.max(published, this.nextSeq[s]!),
        dropped: m.f64[m.slotF64(s, SlotF64.Dropped)]!,
        originDeltaNs: m.f64[m.slotF64(s, SlotF64.OriginDeltaNs)]!,
        droppedByReason: DROP_REASONS.map((_, r) => m.f64[m.slotF64(s, SlotF64.DroppedByReason + r)]!),
        dead: state === SlotState.Dead,
        inSlowPath: Atomics.load(m.i32, m.slotI32(s, SlotI32.InSlowPath)) !== 0,
        open: state === SlotState.Live,
        osThreadId: m.i32[m.slotI32(s, SlotI32.OsThreadId)]!,
        parks: m.f64[m.slotF64(s, SlotF64.Parks)]!,
        longestParkNs: m.f64[m.slotF64(s, SlotF64.LongestParkNs)]!,
      });
    }
    return out;
  }
}
