import { align8, METADATA_PART_TYPE_INDEX, METADATA_TYPE_INDEX, RECORD_HEADER_SIZE, SEQUENCE_GAP_TYPE_INDEX, type RecordTarget, type RecordType, RecordViews } from '../schema/record-abi.js';
import { ByteWriter } from '../format/byte-writer.js';
import { encodeDescriptor } from '../format/metadata-codec.js';
import { BufferingMode, CHUNK_HEADER_BYTES, ChunkF64, ChunkI32, ChunkState, Ctl, DropReasonCode, SessionMemory, SessionState, SlotF64, SlotI32, SlotState } from './session-memory.js';
import { FairQueue, WaitEnd } from './fair-queue.js';
import { requireBuiltin } from '../schema/this-thread.js';
const { AsyncResource } = requireBuiltin('node:async_hooks') as typeof import('node:async_hooks');

/** A chunk its thread has not filled in this long goes back to the drain (and its budget). */
const IDLE_SEAL_MS = 100;
/**
 * The async context the idle-seal timers are armed in: the one the session machinery loaded in (a
 * process's start, usually), not the one of whatever write took a chunk. A timer keeps the context it
 * was armed in (an application's AsyncLocalStorage stores, a request's) while it is pending, and a
 * buffer keeps its timer: armed inside a request, it kept that request's store alive after it.
 */
const timerScope = new AsyncResource('tracepipe.IdleSeal');
/** The block timeout while the session's drain starts, where the session's own is 0 (ThreadBuffer.drainStarting); a thread start takes tens of ms. */
const STARTING_PARK_MS = 5000;

/** Each type's description as a thread buffer writes it (a varint type index, then the descriptor): the same in every session. */
const descriptions = new WeakMap<RecordType, Uint8Array>();

function descriptionOf(type: RecordType): Uint8Array {
  let d = descriptions.get(type);
  if (d === undefined) {
    const w = new ByteWriter(256);
    w.varint(type.typeIndex);
    encodeDescriptor(type, w);
    d = w.take();
    descriptions.set(type, d);
  }
  return d;
}

/** Types a ring cannot describe in one chunk beside their event: one warning each. */
const undescribable = new WeakSet<RecordType>();

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
  /**
   * Per type index, 1 once the type is described where the drain will read it before the type's next
   * record: anywhere earlier in this thread's records (the drain reads them in order), or, in a ring,
   * in the current chunk (an older chunk may be overwritten before a dump, and every chunk that
   * survives must be readable alone). Types are described on first use, each in records of its own.
   */
  described = new Uint8Array(64);
  /** A description left half written (no chunk for the rest): its type index and how far it got. */
  private partType = -1;
  private partOffset = 0;
  private readonly queue: FairQueue;
  detached = false;
  /** Set while this thread writes rundown for a stopping session: such writes must never park. */
  neverBlock = false;
  /**
   * Set while the session's drain thread starts: a Block session parks as always (that drain exists
   * and will free chunks), but with a block timeout of STARTING_PARK_MS where the session's is 0 (wait
   * forever): a drain that fails to start frees nothing, and is heard of on this thread's loop, which a park holds.
   */
  drainStarting = false;
  /** Claimed on the first chunk, so threads that never write take no slot. */
  slot = -1;
  /** The idle-seal timer, made once and re-armed with refresh(); `idleArmed` while it is pending. */
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private idleArmed = false;
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
    if (this.idleArmed || this.memory.mode === BufferingMode.Ring || ThreadBuffer.handingOver) return;
    this.idleArmed = true;
    this.idleChunkSeq = this.chunkSeq;
    timerScope.runInAsyncScope(this.armIdleTimer, this);
  }

  /**
   * One Timeout per buffer, re-armed with refresh(): a new setTimeout per chunk also made a closure
   * and a Timeout object each time (~14,000 instructions on Node 20 against ~10,000, BENCHMARKS.md §6).
   */
  private armIdleTimer(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => this.idleSealDue(), IDLE_SEAL_MS);
    this.idleTimer.unref?.();
  }

  private idleSealDue(): void {
    this.idleArmed = false;
    if (this.chunk < 0) return;
    if (this.chunkSeq === this.idleChunkSeq) this.seal();
    else this.armIdleSeal();
  }

  reserve(size: number, type: RecordType): number {
    const m = this.memory;
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
      return this.reserveInSession(size, type);
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

  private reserveInSession(size: number, type: RecordType): number {
    const m = this.memory;
    if (m.state >= SessionState.Stopping) {
      // The session stops, and this thread has not heard yet: its write is an attempt the session
      // lost, counted with its reason. The detach publishes the slot, which the drain's final count
      // waits for (BUFFERING.md), bounded: a count taken before it goes without this drop.
      this.seal();
      this.drop(DropReasonCode.Stopping);
      return this.detachAndRefuse();
    }
    if (!(size <= m.chunkCapacity)) return this.drop(DropReasonCode.TooLarge);
    if (m.mode === BufferingMode.Ring) return this.reserveInRing(size, type);
    if (this.described[type.typeIndex] !== 1) {
      if (!this.writeDescription(type)) return -1;
      this.markDescribed(type.typeIndex);
    }
    if ((this.chunk < 0 || this.pos + size > this.end) && !this.nextChunk()) return -1;
    return this.pos;
  }

  /**
   * Streaming: writes `type`'s description, in the current chunk when it fits there, else in the next;
   * one larger than a chunk goes in parts across chunks. Returns false when no chunk could be had
   * (the attempt is counted): the next attempt for the same type carries on where this one stopped.
   */
  private writeDescription(type: RecordType): boolean {
    const d = descriptionOf(type);
    const wholeChunk = this.memory.chunkCapacity - RECORD_HEADER_SIZE;
    let offset = this.partType === type.typeIndex ? this.partOffset : 0;
    while (offset < d.length) {
      const room = this.chunk < 0 ? 0 : this.end - this.pos - RECORD_HEADER_SIZE;
      const rest = d.length - offset;
      if (rest > room && (rest <= wholeChunk || room <= 0)) {
        if (!this.nextChunk()) {
          this.partType = type.typeIndex;
          this.partOffset = offset;
          return false;
        }
        continue;
      }
      const n = Math.min(rest, room);
      this.writeMetadata(d, offset, n);
      offset += n;
    }
    this.partType = -1;
    return true;
  }

  /**
   * Ring: the type's event goes into a chunk that describes the type, so that the chunk can be read
   * alone. A type whose description does not fit in one chunk beside its event is refused alone
   * (too-large, with one warning), and every other type is written as usual.
   */
  private reserveInRing(size: number, type: RecordType): number {
    const ti = type.typeIndex;
    const d = descriptionOf(type);
    const describe = align8(RECORD_HEADER_SIZE + d.length);
    if (this.chunk < 0 || this.pos + size + (this.described[ti] === 1 ? 0 : describe) > this.end) {
      if (!(size + describe <= this.memory.chunkCapacity)) return this.refuseUndescribable(type, d.length);
      if (!this.nextChunk()) return -1;
    }
    if (this.described[ti] !== 1) {
      this.writeMetadata(d, 0, d.length);
      this.markDescribed(ti);
    }
    return this.pos;
  }

  private refuseUndescribable(type: RecordType, bytes: number): number {
    if (!undescribable.has(type)) {
      undescribable.add(type);
      process.emitWarning(
        `tracepipe: ${type.provider}/${type.name} is described in ${bytes} bytes, which with its event do not fit in one ${this.memory.chunkSize}-byte chunk of a ring session; ` +
          'its events are dropped there (reason too-large), every other event is kept (a larger buffer has larger chunks; shorter or fewer fields help too)',
      );
    }
    return this.drop(DropReasonCode.TooLarge);
  }

  private markDescribed(typeIndex: number): void {
    if (typeIndex >= this.described.length) {
      const grown = new Uint8Array(Math.max(typeIndex + 1, this.described.length * 2));
      grown.set(this.described);
      this.described = grown;
    }
    this.described[typeIndex] = 1;
  }

  /** `n` bytes of a description from `offset` as one record: the last part is a plain metadata record. */
  private writeMetadata(d: Uint8Array, offset: number, n: number): void {
    const p = this.pos;
    this.u32[(p >> 2) + 1] = offset + n === d.length ? METADATA_TYPE_INDEX : METADATA_PART_TYPE_INDEX;
    this.f64[(p >> 3) + 1] = offset;
    this.u8.set(d.subarray(offset, offset + n), p + RECORD_HEADER_SIZE);
    const len = RECORD_HEADER_SIZE + n;
    this.u32[p >> 2] = len;
    this.pos = (p + len + 7) & -8;
    Atomics.store(this.u32, this.commitIndex, this.pos);
  }

  /**
   * Hands the current chunk to the drain and takes the next: a free one, in a ring the oldest sealed
   * one, in Block mode one the drain frees while this thread waits in line. Returns false when there is
   * none, with the attempt counted as dropped under its reason.
   */
  private nextChunk(): boolean {
    const m = this.memory;
    this.seal();
    let c = m.acquireChunk(this.slot);
    if (c < 0 && m.mode === BufferingMode.Ring) c = m.stealOldest(this.slot);
    if (c < 0) {
      if (m.mode !== BufferingMode.Block || this.neverBlock) return this.refuse(DropReasonCode.Full);
      // After a timed-out park, park again only once the drain has made progress.
      if (this.timedOutAt === Atomics.load(m.i32, Ctl.ChunksFreed)) return this.refuse(DropReasonCode.BlockTimeout);
      c = this.park();
      if (c === WaitEnd.TimedOut) {
        this.timedOutAt = Atomics.load(m.i32, Ctl.ChunksFreed);
        return this.refuse(DropReasonCode.BlockTimeout);
      }
      if (c < 0) return this.refuse(DropReasonCode.Stopping);
    }
    this.take(c);
    return true;
  }

  private refuse(reason: number): false {
    this.drop(reason);
    return false;
  }

  /** Block mode: wait, first in first out, until the drain frees a chunk or the session goes away. */
  private park(): number {
    const m = this.memory;
    this.sealEverywhere();
    const started = performance.now();
    const timeoutMs = this.drainStarting && m.blockTimeoutMs === 0 ? STARTING_PARK_MS : m.blockTimeoutMs;
    const c = this.queue.wait(this.slot, () => m.state >= SessionState.Stopping, timeoutMs);
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
    // A ring chunk must be readable alone: it describes again each type it holds.
    if (m.mode === BufferingMode.Ring) this.described.fill(0);
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
    if (this.memory.mode === BufferingMode.Ring || this.chunk < 0) return;
    // Counted before the seal that may wake the drain, so that the pass reading the sample sees it.
    Atomics.add(this.i32, Ctl.SampleHandOvers, 1);
    this.seal();
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
    else if (!this.quietChunk || m.liveReader) m.wakeDrainIfAsleep();
  }

  private drop(reason: number): number {
    const m = this.memory;
    const f = m.f64;
    this.seq++;
    this.dropped++;
    f[m.slotF64(this.slot, SlotF64.DroppedByReason + reason)]! += 1;
    f[m.slotF64(this.slot, SlotF64.Dropped)] = this.dropped;
    f[m.slotF64(this.slot, SlotF64.NextSeq)] = this.seq;
    this.markGap();
    return -1;
  }

  /**
   * A drop while this thread holds a chunk: the drain numbers the chunk's events from its first
   * sequence number on, so the gap is recorded in it (record-abi.ts), or, with no room left, the chunk
   * is sealed (the next one starts at the right number). Without a chunk there is nothing to mark.
   */
  private markGap(): void {
    if (this.chunk < 0) return;
    const p = this.pos;
    if (p + RECORD_HEADER_SIZE > this.end) return this.seal();
    this.u32[p >> 2] = RECORD_HEADER_SIZE;
    this.u32[(p >> 2) + 1] = SEQUENCE_GAP_TYPE_INDEX;
    this.f64[(p >> 3) + 1] = 0;
    this.pos = p + RECORD_HEADER_SIZE;
    Atomics.store(this.u32, this.commitIndex, this.pos);
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
