import { DROP_REASONS } from '../format/drop-reason.js';
import { align8, RECORD_HEADER_SIZE } from '../schema/record-abi.js';

export { DROP_REASONS };

/**
 * One session's budget: a single SharedArrayBuffer holding a control header, one slot per producing
 * thread, a free-chunk stack and the chunks themselves. Every thread and the drain map the same
 * memory; this file is the one place that knows where things are.
 */

// Int32 indexes into the control header.
export const Ctl = {
  Magic: 0,
  /** SessionState below. */
  State: 1,
  /** Bumped (and notified) whenever a producer seals a chunk or the session changes state. */
  DrainWake: 2,
  /** Free chunks, kept with atomic adds beside the chunk states (which are the truth): a cheap refusal. */
  FreeCount: 3,
  SlotCount: 4,
  ChunkCount: 5,
  ChunkSize: 6,
  /** BufferingMode below. */
  Mode: 7,
  /** Non-zero while the consumer asks the drain to hold off (stream back-pressure). */
  Paused: 8,
  MaxSlots: 9,
  SlotsOffset: 10,
  ChunksOffset: 11,
  /** Block mode's FIFO is a ticket line: the next ticket to hand out, and the one allowed to take a chunk. */
  TicketNext: 12,
  TicketServing: 13,
  /** Bytes the drain has handed to the owning thread that it has not consumed yet. */
  InflightBytes: 14,
  /** Bumped by the drain whenever it frees a chunk: a parked producer's measure of progress. */
  ChunksFreed: 15,
  /** Block mode: how long a producer stays parked while no chunk is freed at all, before it drops (ms; 0 = no limit). */
  BlockTimeoutMs: 16,
  /**
   * Bumped by a producer once a chunk it took is set up (owner, order, state): while it stays put,
   * the drain's list of the chunks in use is still complete and an idle pass need not rebuild it.
   */
  ChunksTaken: 19,
  /** Chunks [0, n) the drain has made resident so far (see SessionMemory.prefault). */
  ResidentChunks: 20,
  /** Ring mode: the next seal order number (a stolen chunk is always the lowest one sealed). */
  SealCounter: 21,
  /** Ring mode: the id of the last dump a waiting owner asked for that the drain has finished (a dying owner waits on it). */
  DumpsDone: 22,
  /**
   * 1 while the drain sleeps because its last pass found nothing: the next producer to take or seal a
   * chunk wakes it (docs/BUFFERING.md, "When the drain runs").
   */
  DrainAsleep: 23,
  /** Passes the drain has made: a counter for tests and diagnostics. */
  DrainPasses: 24,
  /**
   * 1 when the stop is the process's exit flush: the drain does not wait for other threads to hear of
   * it, since they end with the process (and a busy one would only delay the exit).
   */
  Exiting: 25,
  /**
   * 1 while a native signal handler may end this session as a signal kills the process
   * (src/ipc/exit-flush.ts): it cannot notify, so the drain sleeps at most SIGNAL_POLL_MS at a time.
   */
  SignalFlush: 26,
  /** Events the drain has written to the output so far (wraps at 2^32): Runtime.Counters reads it live. */
  EventsWritten: 27,
  /**
   * 1 when a reader consumes the stream as the drain writes it (a socket, a listener): a periodic
   * sample handed over wakes a sleeping drain, since that reader waits for it.
   */
  LiveReader: 28,
  /** A session exporting over OTLP: items (spans, metrics, log records) sent and dropped so far; `ps` shows them. */
  OtlpItemsSent: 29,
  OtlpItemsDropped: 30,
  /**
   * Bumped by a thread as it hands over a periodic sample (ThreadBuffer.handOver): a drain whose pass
   * read one expects the next, and leaves the sequence point that releases it to that sample's pass.
   */
  SampleHandOvers: 31,
  /**
   * 1 when the session's drain is native (src/sinks/native-drain.ts): Atomics.notify cannot wake
   * it, so wakeDrain also calls SessionMemory.wakeNative.
   */
  NativeDrain: 32,
} as const;
export const CONTROL_BYTES = 256;
const MAGIC = 0x54504d31; // "TPM1"

export const SessionState = {
  Inert: 0,
  Enabled: 1,
  Stopping: 2,
  Stopped: 3,
  Failed: 4,
} as const;

/** Ring: a flight recorder; when the budget is full the oldest sealed chunk is overwritten, and nothing is written until a dump. */
export const BufferingMode = { Drop: 0, Block: 1, Ring: 2 } as const;
export type BufferingModeName = 'drop' | 'block' | 'ring';
/** The modes of a session that writes as it goes (an output of its own). */
export type StreamingModeName = Exclude<BufferingModeName, 'ring'>;

// Slot layout (128 bytes): Int32 words 0-7, then Float64 words 4-15.
export const SLOT_BYTES = 128;
export const SlotI32 = {
  ThreadId: 0,
  /** SlotState below. */
  State: 1,
  /** The word a parked producer sleeps on. */
  Wake: 2,
  /** The ticket this slot holds in the wait line, NO_TICKET when it holds none. */
  Ticket: 3,
  /** Bumped by a parked producer at every recheck: a head whose beat stops is dead, and is skipped. */
  Beat: 4,
  /** 1 while the producer is in its slow path (taking a chunk, parking, dropping): a stop waits for 0. */
  InSlowPath: 5,
  /** The producing thread's kernel id (0: unknown): a stopping drain asks the kernel whether it still runs. */
  OsThreadId: 6,
} as const;
/**
 * A slot's ticket word when it holds none: 0, what fresh memory reads, so a session's slots need no
 * writing at its start (4096 slots of 128 bytes for the default 64 MB: 512 KiB that became resident
 * and ~0.5 ms before the first event). The line's tickets start at 1 (Ctl.TicketNext).
 */
export const NO_TICKET = 0;
/** Float64 word indexes within a slot. */
export const SlotF64 = {
  NextSeq: 4,
  Dropped: 5,
  OriginDeltaNs: 6,
  LongestParkNs: 7,
  Parks: 8,
  /** Drops by reason (DropReason order); they add up to Dropped. */
  DroppedByReason: 9,
} as const;
export const SlotState = { Claiming: 0, Live: 1, Published: 2, Dead: 3 } as const;

/** Indexes into DROP_REASONS (format/drop-reason.ts), as the slot's per-reason words keep them. */
export const DropReasonCode = { Full: 0, TooLarge: 1, InvalidArgument: 2, Stopping: 3, BlockTimeout: 4, Overwritten: 5 } as const;

// Chunk header (32 bytes).
export const CHUNK_HEADER_BYTES = 32;
export const ChunkI32 = { State: 0, Owner: 1, Committed: 2, ChunkSeq: 3, SealOrder: 6 } as const;
export const ChunkF64 = { FirstSeq: 2 } as const;
/** A chunk being set up by slot s has state Claimed + s: not yet the drain's to read, and its claimer is known. */
export const ChunkState = { Free: 0, Owned: 1, Sealed: 2, Claimed: 0x10000 } as const;

/** What the drain makes resident before the session starts: a quiet session never needs more. */
export const INITIAL_RESIDENT_BYTES = 2 << 20;
/** Producers wake the drain early only once half of this much (or of what is resident) is in use. */
const WAKE_WINDOW_BYTES = 64 << 20;
const MAX_INFLIGHT_BYTES = 8 << 20;

/**
 * Threads that may write into one session over its life (a slot is taken on a thread's first write
 * and not reused): 1 per 16 KiB of budget, at least 16, at most 4096 — 4096 for the default 64 MB.
 */
export function maxSlotsFor(totalBytes: number): number {
  return Math.min(4096, Math.max(16, Math.floor(totalBytes / 16384)));
}

export interface MemoryLayout {
  readonly totalBytes: number;
  readonly chunkSize: number;
  readonly chunkCount: number;
  readonly maxSlots: number;
}

/** A buffer size given as text (a flag, an environment variable): a positive decimal number of MiB, else undefined. */
export function parseBufferSizeMB(text: string): number | undefined {
  const mb = Number(text);
  return /^\d+(\.\d+)?$/.test(text) && mb > 0 ? mb : undefined;
}

/** Chunks of 64 KiB, smaller for small budgets so that even a tiny buffer has a few chunks to rotate. */
export function planLayout(bufferSizeMB: number): MemoryLayout {
  const total = Math.floor(bufferSizeMB * 1024 * 1024);
  if (!Number.isFinite(total) || total < 16 * 1024) throw new RangeError(`tracepipe: bufferSizeMB must be at least 1/64 (16 KiB); got ${bufferSizeMB}`);
  // Byte offsets into the buffer stay below 2^31: the drain and the producers index it with 32-bit shifts.
  if (total > 2047 * 1024 * 1024) throw new RangeError(`tracepipe: bufferSizeMB must be at most 2047; got ${bufferSizeMB}`);
  const maxSlots = maxSlotsFor(total);
  let chunkSize = 64 * 1024;
  while (chunkSize > 4096 && total / chunkSize < 16) chunkSize /= 2;
  const fixed = CONTROL_BYTES + maxSlots * SLOT_BYTES;
  const chunkCount = Math.max(2, Math.floor((total - fixed) / chunkSize));
  return { totalBytes: total, chunkSize, chunkCount, maxSlots };
}

/** The payload of a typical event, for saying what a ring holds: two numbers, or a number and a short string. */
export const TYPICAL_PAYLOAD_BYTES = 16;

/** What a session's buffer holds, in events of a typical size (a ring keeps that many when full). */
export interface RingCapacity {
  /** The buffer's bytes (its budget, less what is too small to make a chunk). */
  readonly bytes: number;
  /** The bytes one event of TYPICAL_PAYLOAD_BYTES takes in the buffer: its record, header included, 8-byte aligned. */
  readonly eventBytes: number;
  /** Events of that size the buffer holds. */
  readonly events: number;
}

/**
 * Events of `payloadBytes` the chunks of `memory` hold: every chunk, less its header, filled with
 * records of a 16-byte header (length, type, timestamp) plus the payload, 8-byte aligned. A trace
 * file holds the same events in less (a 3–4 byte header, docs/FORMAT.md): the buffer keeps them as
 * producers wrote them, so that writing stays a bump-pointer copy (docs/BUFFERING.md, "Ring mode").
 * The descriptions each chunk of a ring repeats for its types take a little more.
 */
export function capacityOf(memory: { readonly sab: SharedArrayBuffer; readonly chunkSize: number; readonly chunkCount: number }, payloadBytes = TYPICAL_PAYLOAD_BYTES): RingCapacity {
  const eventBytes = align8(RECORD_HEADER_SIZE + payloadBytes);
  return { bytes: memory.sab.byteLength, eventBytes, events: memory.chunkCount * Math.floor((memory.chunkSize - CHUNK_HEADER_BYTES) / eventBytes) };
}

export class SessionMemory {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly u8: Uint8Array;
  readonly chunkSize: number;
  readonly chunkCount: number;
  readonly chunksOffset: number;
  readonly slotsOffset: number;
  readonly maxSlots: number;
  private readonly wakeWindow: number;

  private constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab);
    this.u32 = new Uint32Array(sab);
    this.f64 = new Float64Array(sab);
    this.u8 = new Uint8Array(sab);
    if (this.i32[Ctl.Magic] !== MAGIC) throw new Error('tracepipe: session memory has a bad magic number');
    this.chunkSize = this.i32[Ctl.ChunkSize]!;
    this.chunkCount = this.i32[Ctl.ChunkCount]!;
    this.chunksOffset = this.i32[Ctl.ChunksOffset]!;
    this.slotsOffset = this.i32[Ctl.SlotsOffset]!;
    this.maxSlots = this.i32[Ctl.MaxSlots]!;
    this.wakeWindow = Math.min(this.chunkCount, WAKE_WINDOW_BYTES / this.chunkSize);
  }

  /**
   * Chunks in use beyond which a producer sealing a chunk wakes the drain at once: half of what is
   * resident (so the drain makes more resident before producers reach untouched memory, and freed
   * chunks are reused before untouched ones), at most half of WAKE_WINDOW_BYTES.
   */
  get wakeThreshold(): number {
    // A shift, not Math.floor(x / 2): an odd count would deoptimise code that saw only even ones.
    return Math.min(this.i32[Ctl.ResidentChunks]!, this.wakeWindow) >> 1;
  }

  static create(layout: MemoryLayout, mode: number, blockTimeoutMs = 0): SessionMemory {
    const { chunkSize, chunkCount, maxSlots } = layout;
    const slotsOffset = CONTROL_BYTES;
    const chunksOffset = Math.ceil((slotsOffset + maxSlots * SLOT_BYTES) / 64) * 64;
    const sab = new SharedArrayBuffer(chunksOffset + chunkCount * chunkSize);
    const i32 = new Int32Array(sab);
    i32[Ctl.Magic] = MAGIC;
    i32[Ctl.ChunkSize] = chunkSize;
    i32[Ctl.ChunkCount] = chunkCount;
    i32[Ctl.MaxSlots] = maxSlots;
    i32[Ctl.SlotsOffset] = slotsOffset;
    i32[Ctl.ChunksOffset] = chunksOffset;
    i32[Ctl.Mode] = mode;
    i32[Ctl.BlockTimeoutMs] = blockTimeoutMs;
    i32[Ctl.FreeCount] = chunkCount;
    i32[Ctl.TicketNext] = NO_TICKET + 1;
    i32[Ctl.TicketServing] = NO_TICKET + 1;
    return new SessionMemory(sab);
  }

  static attach(sab: SharedArrayBuffer): SessionMemory {
    return new SessionMemory(sab);
  }

  /**
   * Makes chunks resident ahead of the producers, on the drain thread, so that a page fault (which
   * costs more than an event) rarely lands in the middle of an application thread's write, while
   * memory becomes resident only as the session uses it: a quiet session keeps INITIAL_RESIDENT_BYTES,
   * and a busy one grows to twice its peak use, never past its budget. The drain calls this before
   * the session starts and on every pass; it does nothing until more than half of what is resident is
   * in use. Chunks are handed out lowest first and freed ones are reused first (the free stack), so
   * the chunks ever used are always [0, peak in use).
   *
   * A producer may already be writing into a chunk being touched (it outran the drain), so each page
   * is touched with an atomic add of 0: a write access (the kernel maps the page) that cannot undo a
   * concurrent store.
   */
  prefault(): void {
    const i32 = this.i32;
    const resident = i32[Ctl.ResidentChunks]!;
    if (resident === this.chunkCount) return;
    const inUse = this.chunkCount - Atomics.load(i32, Ctl.FreeCount);
    if (resident > 0 && inUse * 2 <= resident) return;
    const first = Math.ceil(INITIAL_RESIDENT_BYTES / this.chunkSize);
    const target = Math.min(this.chunkCount, Math.max(first, 2 * resident, 2 * inUse));
    const end = this.chunkBase(target);
    for (let b = this.chunkBase(resident) & -4096; b < end; b += 4096) Atomics.add(i32, b >> 2, 0);
    i32[Ctl.ResidentChunks] = target;
  }

  get state(): number {
    return Atomics.load(this.i32, Ctl.State);
  }
  setState(s: number): void {
    Atomics.store(this.i32, Ctl.State, s);
    // A thread waiting for the state to change (the exit flush waits for Stopped) hears it at once.
    Atomics.notify(this.i32, Ctl.State);
    this.wakeDrain();
  }
  get mode(): number {
    return this.i32[Ctl.Mode]!;
  }
  get blockTimeoutMs(): number {
    return this.i32[Ctl.BlockTimeoutMs]!;
  }

  /** Wakes a native drain (set by the session layer, which loads the addon on the thread's first call). */
  static wakeNative: ((sab: SharedArrayBuffer) => void) | undefined;

  wakeDrain(): void {
    Atomics.add(this.i32, Ctl.DrainWake, 1);
    Atomics.notify(this.i32, Ctl.DrainWake);
    if (this.i32[Ctl.NativeDrain] !== 0) SessionMemory.wakeNative?.(this.sab);
  }

  /**
   * A producer has just taken or sealed a chunk (and counted it in ChunksTaken or SealCounter): a
   * drain that went to sleep on finding nothing must see it. The drain sets DrainAsleep before it
   * reads those counters a last time, so either it sees the count or this sees it asleep.
   */
  get liveReader(): boolean {
    return Atomics.load(this.i32, Ctl.LiveReader) !== 0;
  }

  set liveReader(live: boolean) {
    Atomics.store(this.i32, Ctl.LiveReader, live ? 1 : 0);
  }

  wakeDrainIfAsleep(): void {
    if (Atomics.load(this.i32, Ctl.DrainAsleep) !== 0) this.wakeDrain();
  }

  /** Chunks taken plus chunks sealed so far: it moves whenever a producer starts or hands on a chunk. */
  get chunkTurnover(): number {
    return Atomics.load(this.i32, Ctl.ChunksTaken) + Atomics.load(this.i32, Ctl.SealCounter);
  }

  /** No thread holds a chunk and none waits to be read. */
  get allChunksFree(): boolean {
    return Atomics.load(this.i32, Ctl.FreeCount) === this.chunkCount;
  }

  /** Events the drain has written so far, modulo 2^32 (a reader takes differences). */
  get eventsWritten(): number {
    return Atomics.load(this.i32, Ctl.EventsWritten) >>> 0;
  }

  /** Events the producing threads have dropped so far. */
  get eventsDropped(): number {
    let n = 0;
    for (let s = 0; s < this.slotCount; s++) n += this.f64[this.slotF64(s, SlotF64.Dropped)]!;
    return n;
  }

  /** Chunks in use (taken by a thread, or waiting for the drain) out of the budget, 0..1. */
  get bufferUse(): number {
    return (this.chunkCount - Atomics.load(this.i32, Ctl.FreeCount)) / this.chunkCount;
  }

  /** How many passes the drain has made. */
  get drainPasses(): number {
    return Atomics.load(this.i32, Ctl.DrainPasses);
  }

  chunkBase(c: number): number {
    return this.chunksOffset + c * this.chunkSize;
  }
  /** Largest record a chunk can hold. */
  get chunkCapacity(): number {
    return this.chunkSize - CHUNK_HEADER_BYTES;
  }

  slotI32(slot: number, word: number): number {
    return ((this.slotsOffset + slot * SLOT_BYTES) >> 2) + word;
  }
  slotF64(slot: number, word: number): number {
    return ((this.slotsOffset + slot * SLOT_BYTES) >> 3) + word;
  }

  /** Claims a slot for a producing thread; -1 when all are taken. */
  allocSlot(threadId: number, originDeltaNs: number, osThreadId: number): number {
    const slot = Atomics.add(this.i32, Ctl.SlotCount, 1);
    if (slot >= this.maxSlots) {
      Atomics.sub(this.i32, Ctl.SlotCount, 1);
      return -1;
    }
    this.f64[this.slotF64(slot, SlotF64.OriginDeltaNs)] = originDeltaNs;
    this.i32[this.slotI32(slot, SlotI32.ThreadId)] = threadId;
    this.i32[this.slotI32(slot, SlotI32.OsThreadId)] = osThreadId;
    Atomics.store(this.i32, this.slotI32(slot, SlotI32.State), SlotState.Live);
    return slot;
  }

  get slotCount(): number {
    return Math.min(Atomics.load(this.i32, Ctl.SlotCount), this.maxSlots);
  }

  /** Producers holding a ticket in the wait line right now (Block mode). */
  get parked(): number {
    let n = 0;
    for (let s = 0; s < this.slotCount; s++) if (Atomics.load(this.i32, this.slotI32(s, SlotI32.Ticket)) !== NO_TICKET) n++;
    return n;
  }

  /**
   * Takes a free chunk for `slot`, or -1 when the budget is exhausted or parked producers are ahead in
   * line. There is no lock a dying thread could leave held: a chunk is taken by a compare-and-swap of
   * its own state word, lowest first (so a quiet session touches few pages).
   */
  acquireChunk(slot: number): number {
    if (Atomics.load(this.i32, Ctl.FreeCount) <= 0) return -1;
    if (Atomics.load(this.i32, Ctl.TicketNext) !== Atomics.load(this.i32, Ctl.TicketServing)) return -1;
    return this.claimFree(slot);
  }

  /** The CAS scan itself; the wait line's head calls it directly. */
  claimFree(slot: number): number {
    const i32 = this.i32;
    const stride = this.chunkSize >> 2;
    for (let c = 0, hi = this.chunksOffset >> 2; c < this.chunkCount; c++, hi += stride) {
      // A plain load to skip busy chunks; the CAS decides.
      if (i32[hi + ChunkI32.State] !== ChunkState.Free) continue;
      if (Atomics.compareExchange(i32, hi + ChunkI32.State, ChunkState.Free, ChunkState.Claimed + slot) === ChunkState.Free) {
        Atomics.sub(i32, Ctl.FreeCount, 1);
        return c;
      }
    }
    return -1;
  }

  /**
   * Ring mode: takes the oldest sealed chunk for `slot` (its events are overwritten; a dump counts
   * them as lost), or -1 when none is sealed. Stealing in seal order keeps each thread's surviving
   * chunks a contiguous run of its newest.
   */
  stealOldest(slot: number): number {
    const i32 = this.i32;
    const stride = this.chunkSize >> 2;
    for (;;) {
      let oldest = -1;
      let order = Infinity;
      for (let c = 0, hi = this.chunksOffset >> 2; c < this.chunkCount; c++, hi += stride) {
        if (i32[hi + ChunkI32.State] === ChunkState.Sealed && i32[hi + ChunkI32.SealOrder]! < order) {
          order = i32[hi + ChunkI32.SealOrder]!;
          oldest = c;
        }
      }
      if (oldest < 0) return -1;
      const hi = this.chunkBase(oldest) >> 2;
      if (Atomics.compareExchange(i32, hi + ChunkI32.State, ChunkState.Sealed, ChunkState.Claimed + slot) === ChunkState.Sealed) return oldest;
    }
  }

  /** Returns a drained chunk to the budget (drain side). */
  releaseChunk(c: number): void {
    Atomics.store(this.i32, (this.chunkBase(c) >> 2) + ChunkI32.State, ChunkState.Free);
    Atomics.add(this.i32, Ctl.FreeCount, 1);
    Atomics.add(this.i32, Ctl.ChunksFreed, 1);
  }

  /**
   * A thread that died (a terminated worker) can hold nothing others wait on: its owned chunks go to
   * the drain as sealed (their committed records are read, then freed), a chunk it was setting up goes
   * back to the budget, and its place in the wait line is given up. Idempotent; returns whether the
   * thread had a slot here.
   */
  reclaimThread(threadId: number): boolean {
    const i32 = this.i32;
    let found = false;
    for (let s = 0; s < this.slotCount; s++) {
      if (i32[this.slotI32(s, SlotI32.ThreadId)] !== threadId) continue;
      const state = Atomics.load(i32, this.slotI32(s, SlotI32.State));
      if (state === SlotState.Dead || state === SlotState.Claiming) continue;
      found = true;
      Atomics.store(i32, this.slotI32(s, SlotI32.Ticket), NO_TICKET);
      Atomics.store(i32, this.slotI32(s, SlotI32.InSlowPath), 0);
      const stride = this.chunkSize >> 2;
      for (let c = 0, hi = this.chunksOffset >> 2; c < this.chunkCount; c++, hi += stride) {
        const cs = Atomics.load(i32, hi + ChunkI32.State);
        if (cs === ChunkState.Owned && i32[hi + ChunkI32.Owner] === s) Atomics.store(i32, hi + ChunkI32.State, ChunkState.Sealed);
        else if (cs === ChunkState.Claimed + s && Atomics.compareExchange(i32, hi + ChunkI32.State, cs, ChunkState.Free) === cs) {
          Atomics.add(i32, Ctl.FreeCount, 1);
        }
      }
      Atomics.store(i32, this.slotI32(s, SlotI32.State), SlotState.Dead);
    }
    if (found) this.wakeDrain();
    return found;
  }

  /** Stream and listener outputs: the owning thread has consumed `n` bytes the drain handed it. */
  acknowledge(n: number): void {
    Atomics.sub(this.i32, Ctl.InflightBytes, n);
    this.wakeDrain();
  }

  /** The owning thread is behind (its stream is full, or too many bytes are in flight): hold off. */
  get outputCongested(): boolean {
    return Atomics.load(this.i32, Ctl.Paused) !== 0 || Atomics.load(this.i32, Ctl.InflightBytes) > MAX_INFLIGHT_BYTES;
  }
}
