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
  FreeLock: 3,
  FreeCount: 4,
  SlotCount: 5,
  ChunkCount: 6,
  ChunkSize: 7,
  /** BufferingMode below. */
  Mode: 8,
  /** Non-zero while the consumer asks the drain to hold off (stream back-pressure). */
  Paused: 9,
  MaxSlots: 10,
  SlotsOffset: 11,
  ChunksOffset: 12,
  FreeStackOffset: 13,
  WaitHead: 14,
  WaitTail: 15,
  WaitQueueOffset: 16,
  /** Bytes the drain has handed to the owning thread that it has not consumed yet. */
  InflightBytes: 17,
  /** Producers parked right now (Block mode). */
  Parked: 18,
  /**
   * Bumped by a producer once a chunk it took is set up (owner, order, state): while it stays put,
   * the drain's list of the chunks in use is still complete and an idle pass need not rebuild it.
   */
  ChunksTaken: 19,
  /** Chunks [0, n) the drain has made resident so far (see SessionMemory.prefault). */
  ResidentChunks: 20,
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

export const BufferingMode = { Drop: 0, Block: 1 } as const;
export type BufferingModeName = 'drop' | 'block';

// Slot layout (64 bytes): Int32 words then Float64 words.
export const SLOT_BYTES = 64;
export const SlotI32 = { ThreadId: 0, State: 1, Wake: 2 } as const;
/** Float64 word indexes within a slot. */
export const SlotF64 = { NextSeq: 2, Dropped: 3, OriginDeltaNs: 4, LongestParkNs: 5, Parks: 6 } as const;

// Chunk header (32 bytes).
export const CHUNK_HEADER_BYTES = 32;
export const ChunkI32 = { State: 0, Owner: 1, Committed: 2, ChunkSeq: 3 } as const;
export const ChunkF64 = { FirstSeq: 2 } as const;
export const ChunkState = { Free: 0, Owned: 1, Sealed: 2 } as const;

/** What the drain makes resident before the session starts: a quiet session never needs more. */
const INITIAL_RESIDENT_BYTES = 2 << 20;
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
  if (total > 4095 * 1024 * 1024) throw new RangeError(`tracepipe: bufferSizeMB must be below 4095; got ${bufferSizeMB}`);
  const maxSlots = maxSlotsFor(total);
  let chunkSize = 64 * 1024;
  while (chunkSize > 4096 && total / chunkSize < 16) chunkSize /= 2;
  const fixed = CONTROL_BYTES + maxSlots * SLOT_BYTES + (maxSlots + 1) * 4;
  const perChunk = chunkSize + 4;
  const chunkCount = Math.max(2, Math.floor((total - fixed) / perChunk));
  return { totalBytes: total, chunkSize, chunkCount, maxSlots };
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
  readonly freeStack: number;
  readonly waitQueue: number;
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
    this.freeStack = this.i32[Ctl.FreeStackOffset]! >> 2;
    this.waitQueue = this.i32[Ctl.WaitQueueOffset]! >> 2;
    this.maxSlots = this.i32[Ctl.MaxSlots]!;
    this.wakeWindow = Math.min(this.chunkCount, WAKE_WINDOW_BYTES / this.chunkSize);
  }

  /**
   * Chunks in use beyond which a producer sealing a chunk wakes the drain at once: half of what is
   * resident (so the drain makes more resident before producers reach untouched memory, and freed
   * chunks are reused before untouched ones), at most half of WAKE_WINDOW_BYTES.
   */
  get wakeThreshold(): number {
    return Math.floor(Math.min(this.i32[Ctl.ResidentChunks]!, this.wakeWindow) / 2);
  }

  static create(layout: MemoryLayout, mode: number): SessionMemory {
    const { chunkSize, chunkCount, maxSlots } = layout;
    const slotsOffset = CONTROL_BYTES;
    const waitQueueOffset = slotsOffset + maxSlots * SLOT_BYTES;
    const freeStackOffset = waitQueueOffset + (maxSlots + 1) * 4;
    const chunksOffset = Math.ceil((freeStackOffset + chunkCount * 4) / 64) * 64;
    const sab = new SharedArrayBuffer(chunksOffset + chunkCount * chunkSize);
    const i32 = new Int32Array(sab);
    i32[Ctl.Magic] = MAGIC;
    i32[Ctl.ChunkSize] = chunkSize;
    i32[Ctl.ChunkCount] = chunkCount;
    i32[Ctl.MaxSlots] = maxSlots;
    i32[Ctl.SlotsOffset] = slotsOffset;
    i32[Ctl.ChunksOffset] = chunksOffset;
    i32[Ctl.FreeStackOffset] = freeStackOffset;
    i32[Ctl.WaitQueueOffset] = waitQueueOffset;
    i32[Ctl.Mode] = mode;
    // Lowest chunk on top, so a quiet session touches few pages.
    for (let k = 0; k < chunkCount; k++) i32[(freeStackOffset >> 2) + k] = chunkCount - 1 - k;
    i32[Ctl.FreeCount] = chunkCount;
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
    this.wakeDrain();
  }
  get mode(): number {
    return this.i32[Ctl.Mode]!;
  }

  wakeDrain(): void {
    Atomics.add(this.i32, Ctl.DrainWake, 1);
    Atomics.notify(this.i32, Ctl.DrainWake);
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
  allocSlot(threadId: number, originDeltaNs: number): number {
    const slot = Atomics.add(this.i32, Ctl.SlotCount, 1);
    if (slot >= this.maxSlots) {
      Atomics.sub(this.i32, Ctl.SlotCount, 1);
      return -1;
    }
    this.f64[this.slotF64(slot, SlotF64.OriginDeltaNs)] = originDeltaNs;
    this.i32[this.slotI32(slot, SlotI32.ThreadId)] = threadId;
    Atomics.store(this.i32, this.slotI32(slot, SlotI32.State), 1);
    return slot;
  }

  get slotCount(): number {
    return Math.min(Atomics.load(this.i32, Ctl.SlotCount), this.maxSlots);
  }

  lock(): void {
    // The critical sections are a handful of loads and stores; spinning is cheaper than parking.
    while (Atomics.compareExchange(this.i32, Ctl.FreeLock, 0, 1) !== 0) {
      /* spin */
    }
  }
  unlock(): void {
    Atomics.store(this.i32, Ctl.FreeLock, 0);
  }

  /** Pops a free chunk, or -1 when the budget is exhausted or parked producers are ahead in line. */
  acquireChunk(): number {
    // Cheap refusal first: an exhausted budget must not make every dropped event take the lock.
    if (Atomics.load(this.i32, Ctl.FreeCount) === 0) return -1;
    this.lock();
    const n = this.i32[Ctl.FreeCount]!;
    if (n === 0 || this.i32[Ctl.WaitHead] !== this.i32[Ctl.WaitTail]) {
      this.unlock();
      return -1;
    }
    const c = this.i32[this.freeStack + n - 1]!;
    this.i32[Ctl.FreeCount] = n - 1;
    this.unlock();
    return c;
  }

  /** Returns a drained chunk to the budget (drain side). */
  releaseChunk(c: number): void {
    Atomics.store(this.i32, (this.chunkBase(c) >> 2) + ChunkI32.State, ChunkState.Free);
    this.lock();
    const n = this.i32[Ctl.FreeCount]!;
    this.i32[this.freeStack + n] = c;
    this.i32[Ctl.FreeCount] = n + 1;
    this.unlock();
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
