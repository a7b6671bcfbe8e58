import { METADATA_TYPE_INDEX, RECORD_HEADER_SIZE, type RecordTarget, RecordViews } from '../schema/record-abi.js';
import { ByteWriter } from '../format/byte-writer.js';
import { encodeDescriptor } from '../format/metadata-codec.js';
import type { EventType } from '../schema/event-type.js';
import { BufferingMode, CHUNK_HEADER_BYTES, ChunkF64, ChunkI32, ChunkState, Ctl, DropReasonCode, SessionMemory, SessionState, SlotF64, SlotI32, SlotState } from './session-memory.js';
import { FairQueue, WaitEnd } from './fair-queue.js';

/** A chunk its thread has not filled in this long goes back to the drain (and its budget). */
const IDLE_SEAL_MS = 100;

/**
 * One thread's tenancy in one session's buffer (Phosphor's ChunkTenant): it borrows a chunk, copies
 * records into it, seals it when full and borrows the next. What happens when no chunk is free is
 * decided here: Drop counts the attempt and moves on; Block parks in FIFO order until the drain
 * frees one (see docs/BUFFERING.md).
 */
export class ThreadBuffer extends RecordViews implements RecordTarget {
  /**
   * Set while this thread writes a burst it hands over itself (ThreadSessions.writeAndHandOver): no
   * idle-seal timer is armed (a cleared Node.js timer still wakes the thread at its time), and a
   * sleeping drain is not woken for a chunk taken for the burst: it reads it on its next pass
   * (BUFFERING.md). A chunk taken before holds other events too: its seal wakes the drain as usual.
   */
  static handingOver = false;

  pos = 0;
  end = 0;
  commitIndex = 0;
  seq = 0;

  dropped = 0;
  private chunk = -1;
  private chunkSeq = 0;
  private pending: Uint8Array[] = [];
  private readonly described = new Set<number>();
  /** Ring mode: every descriptor this thread has written, repeated at the start of each chunk (an older chunk may be overwritten). */
  private readonly descriptors: Uint8Array[] = [];
  private readonly queue: FairQueue;
  detached = false;
  /** Set while this thread writes rundown for a stopping session: such writes must never park. */
  neverBlock = false;
  /** Claimed on the first chunk, so threads that never write take no slot. */
  slot = -1;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private idleChunkSeq = -1;
  /** The current chunk was taken for a hand-over burst: it holds nothing else, and its seal wakes no drain. */
  private quietChunk = false;
  /** Ctl.ChunksFreed when a park last timed out: until the drain frees a chunk again, drop without parking. */
  private timedOutAt = -1;

  constructor(
    readonly memory: SessionMemory,
    private readonly claimSlot: () => number,
    private readonly onDetach: () => void,
    /** Seals this thread's chunks in every session: a thread parks holding no chunk anywhere (docs/BUFFERING.md). */
    private readonly sealEverywhere: () => void,
  ) {
    super(memory.sab);
    this.queue = new FairQueue(memory);
  }

  /**
   * An idle thread must not sit on a chunk others need (in Block mode they would wait for it), nor on
   * events a sleeping drain would not see before the chunk is sealed: a timer seals a chunk its thread
   * has kept for IDLE_SEAL_MS. One timer per buffer, re-armed per chunk; it runs when the thread's
   * event loop turns, and never keeps the thread alive. A ring needs none: it is not drained while it
   * runs, a dump reads the chunks threads hold, and a chunk sealed early would waste ring space.
   */
  private armIdleSeal(): void {
    if (this.idleTimer || this.memory.mode === BufferingMode.Ring || ThreadBuffer.handingOver) return;
    this.idleChunkSeq = this.chunkSeq;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.chunk < 0) return;
      if (this.chunkSeq === this.idleChunkSeq) this.seal();
      else this.armIdleSeal();
    }, IDLE_SEAL_MS);
    this.idleTimer.unref?.();
  }

  /** Makes sure the drain learns `type`'s metadata before its first event from this thread. */
  describe(type: EventType): void {
    if (this.described.has(type.typeIndex)) return;
    this.described.add(type.typeIndex);
    const w = new ByteWriter(256);
    w.varint(type.typeIndex);
    encodeDescriptor(type, w);
    const payload = w.take();
    if (this.memory.mode === BufferingMode.Ring) this.descriptors.push(payload);
    if (this.chunk >= 0 && this.pos + RECORD_HEADER_SIZE + payload.length <= this.end) {
      this.writeMetadata(payload);
    } else {
      this.pending.push(payload);
      // Send the next write down the slow path, which writes pending metadata first.
      this.end = this.pos;
    }
  }

  private writeMetadata(payload: Uint8Array): void {
    const p = this.pos;
    this.u32[(p >> 2) + 1] = METADATA_TYPE_INDEX;
    this.f64[(p >> 3) + 1] = 0;
    this.u8.set(payload, p + RECORD_HEADER_SIZE);
    const len = RECORD_HEADER_SIZE + payload.length;
    this.u32[p >> 2] = len;
    this.pos = (p + len + 7) & -8;
    Atomics.store(this.u32, this.commitIndex, this.pos);
  }

  reserve(size: number): number {
    const m = this.memory;
    this.seal();
    if (this.slot < 0) {
      if (m.state >= SessionState.Stopping) return this.detachAndRefuse();
      this.slot = this.claimSlot();
      if (this.slot < 0) return this.detachAndRefuse();
    }
    // Set before the state is checked: a stopping drain waits until no live slot is in here, so an
    // attempt that saw the session running is counted before the drain takes its final count.
    const flag = m.slotI32(this.slot, SlotI32.InSlowPath);
    Atomics.store(m.i32, flag, 1);
    try {
      return this.reserveInSession(size);
    } finally {
      Atomics.store(m.i32, flag, 0);
    }
  }

  /** Validation rejected an argument before anything was written: count the attempt as dropped. */
  reject(): void {
    if (this.detached) return;
    if (this.slot < 0) {
      this.slot = this.claimSlot();
      if (this.slot < 0) return void this.detachAndRefuse();
    }
    this.drop(DropReasonCode.InvalidArgument);
  }

  private reserveInSession(size: number): number {
    const m = this.memory;
    if (m.state >= SessionState.Stopping) {
      // The session stops, and this thread has not heard yet: its write is an attempt the session
      // lost, counted with its reason. The detach publishes the slot, which the drain's final count
      // waits for (BUFFERING.md), bounded: a count taken before it goes without this drop.
      this.drop(DropReasonCode.Stopping);
      return this.detachAndRefuse();
    }
    let need = size;
    for (const p of this.pending) need += RECORD_HEADER_SIZE + p.length + 8;
    if (!(need <= m.chunkCapacity)) return this.drop(DropReasonCode.TooLarge);
    let c = m.acquireChunk(this.slot);
    if (c < 0 && m.mode === BufferingMode.Ring) c = m.stealOldest(this.slot);
    if (c < 0) {
      if (m.mode !== BufferingMode.Block || this.neverBlock) return this.drop(DropReasonCode.Full);
      // After a timed-out park, park again only once the drain has made progress.
      if (this.timedOutAt === Atomics.load(m.i32, Ctl.ChunksFreed)) return this.drop(DropReasonCode.BlockTimeout);
      c = this.park();
      if (c === WaitEnd.TimedOut) {
        this.timedOutAt = Atomics.load(m.i32, Ctl.ChunksFreed);
        return this.drop(DropReasonCode.BlockTimeout);
      }
      if (c < 0) return this.drop(DropReasonCode.Stopping);
    }
    this.take(c);
    if (m.mode === BufferingMode.Ring) {
      // Each chunk describes every type it may hold: a dump can decode any chunk that survives.
      for (const d of this.descriptors) if (!this.pending.includes(d)) this.writeMetadata(d);
      if (this.pos + size > this.end) return this.drop(DropReasonCode.TooLarge);
    }
    for (const p of this.pending) this.writeMetadata(p);
    this.pending = [];
    return this.pos;
  }

  /** Block mode: wait, first in first out, until the drain frees a chunk or the session goes away. */
  private park(): number {
    const m = this.memory;
    this.sealEverywhere();
    const started = performance.now();
    const c = this.queue.wait(this.slot, () => m.state >= SessionState.Stopping);
    const waited = (performance.now() - started) * 1e6;
    const f = m.f64;
    const longest = m.slotF64(this.slot, SlotF64.LongestParkNs);
    if (waited > f[longest]!) f[longest] = waited;
    f[m.slotF64(this.slot, SlotF64.Parks)]! += 1;
    return c;
  }

  private take(c: number): void {
    const m = this.memory;
    const base = m.chunkBase(c);
    const hi = base >> 2;
    this.i32[hi + ChunkI32.Owner] = this.slot;
    this.i32[hi + ChunkI32.ChunkSeq] = this.chunkSeq++;
    this.f64[(base >> 3) + ChunkF64.FirstSeq] = this.seq;
    this.pos = base + CHUNK_HEADER_BYTES;
    this.end = base + m.chunkSize;
    this.commitIndex = hi + ChunkI32.Committed;
    Atomics.store(this.u32, this.commitIndex, this.pos);
    Atomics.store(this.i32, hi + ChunkI32.State, ChunkState.Owned);
    Atomics.add(this.i32, Ctl.ChunksTaken, 1);
    this.quietChunk = ThreadBuffer.handingOver;
    if (!this.quietChunk) m.wakeDrainIfAsleep();
    this.chunk = c;
    this.armIdleSeal();
  }

  /**
   * The thread expects to write nothing for a while: hands its chunk to the drain now rather than
   * from an idle-seal timer. A ring keeps it: a dump reads it there.
   */
  handOver(): void {
    if (this.memory.mode !== BufferingMode.Ring) this.seal();
  }

  /** Hands the current chunk to the drain. */
  seal(): void {
    if (this.chunk < 0) return;
    const m = this.memory;
    const hi = m.chunkBase(this.chunk) >> 2;
    this.i32[hi + ChunkI32.SealOrder] = Atomics.add(this.i32, Ctl.SealCounter, 1);
    Atomics.store(this.i32, hi + ChunkI32.State, ChunkState.Sealed);
    this.chunk = -1;
    this.pos = this.end = 0;
    // Waking the drain is a system call and a context switch: only once half the chunks that are
    // already mapped are in use (so freed ones are reused before untouched memory is), or when it
    // sleeps for want of work. Otherwise its periodic pass (every 100 ms) collects the chunk. A ring is
    // never drained: its drain needs waking only to make more of the budget resident.
    if (m.mode === BufferingMode.Ring && m.i32[Ctl.ResidentChunks] === m.chunkCount) return;
    if (m.chunkCount - Atomics.load(m.i32, Ctl.FreeCount) > m.wakeThreshold) m.wakeDrain();
    else if (!this.quietChunk) m.wakeDrainIfAsleep();
  }

  private drop(reason: number): number {
    const m = this.memory;
    const f = m.f64;
    this.seq++;
    this.dropped++;
    f[m.slotF64(this.slot, SlotF64.DroppedByReason + reason)]! += 1;
    f[m.slotF64(this.slot, SlotF64.Dropped)] = this.dropped;
    f[m.slotF64(this.slot, SlotF64.NextSeq)] = this.seq;
    return -1;
  }

  private detachAndRefuse(): number {
    this.detach();
    return -1;
  }

  /** The session is gone: stop targeting it, and say so to a stopping drain (nothing more comes from here). */
  detach(): void {
    if (this.detached) return;
    this.detached = true;
    this.chunk = -1;
    this.pos = this.end = 0;
    this.publish();
    this.onDetach();
  }

  /**
   * Publishes this thread's position so a stop sees attempts made after its last chunk, and that this
   * thread writes no more to the session: the drain's last count waits for that (BUFFERING.md).
   */
  publish(): void {
    const m = this.memory;
    if (this.slot < 0) return;
    m.f64[m.slotF64(this.slot, SlotF64.NextSeq)] = this.seq;
    Atomics.store(m.i32, m.slotI32(this.slot, SlotI32.State), SlotState.Published);
  }
}
