import { threadId as thisThreadId } from '../schema/this-thread.js';
import { GcPauseTally, TALLY_BYTES } from './gc-pause-tally.js';
const threadId = thisThreadId();

/**
 * One thread's GC pauses as its GC hook recorded them (native/gc-hook/gc_hook.cc writes, this side
 * reads; the layout is shared). The hook appends inside each pause, whatever the event loop does;
 * any thread holding the SharedArrayBuffer can take what it holds: the owning thread when its loop
 * turns or it exits, the main thread's watchdog while that loop is blocked.
 *
 * Each pause is taken exactly once: the taker of a record is whoever advances `Taken` past it with a
 * compare-and-swap. Takers also hold `Taker` while they copy and write, so a thread about to exit can
 * wait (bounded) until another taker has written what it took before the session's last flush.
 * Past the records (where the hook never looks) lie the running totals by kind of every pause taken,
 * whoever took it: Runtime.Counters reads them (gc-pause-tally.ts).
 */
const enum Word {
  Written = 0,
  Taken = 1,
  /** 0, or the taker's threadId + 1. */
  Taker = 2,
  Lost = 3,
  Capacity = 4,
  LostReported = 5,
  /** 1 while pauses are recorded; the hook only counts and rings otherwise. */
  Record = 6,
  /** 1: the hook rings the doorbell at the next pause (and clears it). */
  Armed = 7,
  /** Mark-compacts so far (free-running), counted whether recording or not. */
  MarkCompacts = 8,
}
const HEADER_BYTES = 64;
/** f64 start (ns on the process monotonic clock), f64 duration (ns), f64 heap used after, f64 preemptions, u32 type, u32 flags. */
const RECORD_BYTES = 40;
const RECORD_F64 = RECORD_BYTES / 8;
const RECORD_U32 = RECORD_BYTES / 4;
/** 320 KiB: seconds of a thread collecting its young generation back to back (~1,300 a second with 1 MB semi-spaces). */
const DEFAULT_CAPACITY = 8192;

export interface GcRecord {
  readonly startNs: number;
  readonly durationNs: number;
  readonly heapUsedAfter: number;
  /** Involuntary context switches of the thread during the pause; NaN when the platform cannot say. */
  readonly preemptions: number;
  /** V8's GCType. */
  readonly type: number;
  /** V8's GCCallbackFlags. */
  readonly flags: number;
}

export class GcRing {
  private readonly words: Int32Array;
  private readonly f64: Float64Array;
  private readonly u32: Uint32Array;
  private readonly mask: number;
  private readonly me = threadId + 1;
  /** Every pause taken so far, by kind. */
  readonly tally: GcPauseTally;

  constructor(readonly sab: SharedArrayBuffer = GcRing.allocate(DEFAULT_CAPACITY)) {
    this.words = new Int32Array(sab, 0, HEADER_BYTES / 4);
    const capacity = this.words[Word.Capacity]!;
    this.f64 = new Float64Array(sab, HEADER_BYTES, capacity * RECORD_F64);
    this.u32 = new Uint32Array(sab, HEADER_BYTES, capacity * RECORD_U32);
    this.mask = capacity - 1;
    this.tally = new GcPauseTally(sab, HEADER_BYTES + capacity * RECORD_BYTES);
  }

  static allocate(capacity: number): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(HEADER_BYTES + capacity * RECORD_BYTES + TALLY_BYTES);
    new Int32Array(sab)[Word.Capacity] = capacity;
    return sab;
  }

  /**
   * Hands every pause recorded and not yet taken to `each`, oldest first. When another thread is
   * taking, returns at once (it will hand them over), or with `waitMs` waits up to that long for it
   * to finish, then takes what is left. Returns whether every pause recorded before the call has been
   * handed over, here or by a taker that finished (not so when another was still taking).
   */
  take(each: (r: GcRecord) => void, waitMs = 0): boolean {
    const w = this.words;
    // Called from inside this thread's own take (a write it made stopped the session, whose flush
    // takes again): the outer take hands the rest over; waiting for it would wait for ourselves.
    if (Atomics.load(w, Word.Taker) === this.me) return false;
    let holding = Atomics.compareExchange(w, Word.Taker, 0, this.me) === 0;
    if (!holding) {
      if (waitMs <= 0) return false;
      holding = this.waitForTaker(waitMs);
    }
    try {
      for (;;) {
        const t = Atomics.load(w, Word.Taken);
        if (t === Atomics.load(w, Word.Written)) break;
        const r = this.read(t & this.mask);
        // Another taker got it first (only after a wait ran out); the record may be overwritten since.
        if (Atomics.compareExchange(w, Word.Taken, t, (t + 1) | 0) !== t) continue;
        this.tally.add(r.type, r.durationNs);
        each(r);
      }
    } finally {
      if (holding) {
        Atomics.store(w, Word.Taker, 0);
        Atomics.notify(w, Word.Taker);
      }
    }
    return holding;
  }

  /** Whether the hook records pauses into the ring (it counts mark-compacts and rings either way). */
  setRecording(on: boolean): void {
    Atomics.store(this.words, Word.Record, on ? 1 : 0);
  }

  /** The hook rings the doorbell at the next pause. */
  arm(): void {
    Atomics.store(this.words, Word.Armed, 1);
  }

  /** Mark-compacts of the thread so far (wraps). */
  get markCompacts(): number {
    return Atomics.load(this.words, Word.MarkCompacts);
  }

  /** Pauses the hook could not record since the last call (the ring was full), counted once across threads. */
  takeLost(): number {
    const lost = Atomics.load(this.words, Word.Lost);
    const reported = Atomics.load(this.words, Word.LostReported);
    if (lost === reported || Atomics.compareExchange(this.words, Word.LostReported, reported, lost) !== reported) return 0;
    return (lost - reported) >>> 0;
  }

  /** Waits for the other taker to let go, then holds the ring; false if it did not within `ms`. */
  private waitForTaker(ms: number): boolean {
    const deadline = performance.now() + ms;
    for (;;) {
      const holder = Atomics.compareExchange(this.words, Word.Taker, 0, this.me);
      if (holder === 0) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.words, Word.Taker, holder, left);
    }
  }

  private read(slot: number): GcRecord {
    const f = slot * RECORD_F64;
    const u = slot * RECORD_U32 + 8;
    const f64 = this.f64;
    return { startNs: f64[f]!, durationNs: f64[f + 1]!, heapUsedAfter: f64[f + 2]!, preemptions: f64[f + 3]!, type: this.u32[u]!, flags: this.u32[u + 1]! };
  }
}
