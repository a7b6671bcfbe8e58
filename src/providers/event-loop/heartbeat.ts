import type { SchedSample } from '../../session/thread-schedstat.js';

/**
 * What the main thread's event loop and its watchdog thread share (a SharedArrayBuffer the watchdog
 * reads without needing that loop): the beats the loop's sampler makes while the loop has work, and,
 * while the sampler rests, where the thread stood (its schedstat, or its loop's idle time) and a
 * doorbell that asks it to answer.
 */
const enum Word {
  /** Beats so far: each proves the loop turned at LastBeatMs. */
  Beat = 0,
  Stop = 1,
  StallMs = 2,
  /** What the watchdog sleeps on: bumped for a stop, a new setting, and beats while it listens. */
  Wake = 3,
  /** What the watchdog does (WatchdogDuty bits). */
  Duties = 4,
  /** 1 while the watchdog waits for the next beat (a stall's end, a doorbell's answer): beats must wake it. */
  Listening = 5,
  /** 1 while the sampler rests (no timer; the thread sleeps unless something else wakes it). */
  Resting = 6,
  /** The doorbell: the watchdog bumps it when a resting thread has run, and the thread answers when its loop turns. */
  Ring = 7,
  /** The thread's `arrivals` (times put on a CPU) when it began resting. */
  RestArrivals = 8,
  /** Counters for tests and diagnostics: the watchdog's readings of a resting thread, and its rings. */
  Polls = 9,
  Rings = 10,
}
/** Float64 indexes (after the 64 bytes of Int32 words). */
const enum F64 {
  /** Time of the last beat (ms on the process monotonic clock). */
  LastBeatMs = 8,
  /** The thread's runnable time (ns) when it began resting, and when that was. */
  RestRunnableNs = 9,
  RestSinceMs = 10,
  /** When the watchdog reckons a resting thread woke, by its CPU time, and when it rang. */
  WokeAtMs = 11,
  RingAtMs = 12,
  /** While the watchdog reports a stall: when the loop was last known free (NaN otherwise). */
  StallFromMs = 13,
  /** The loop's idle time (ms) when it began resting (the loop-idle route's baseline). */
  RestIdleMs = 14,
}
const BYTES = 120;

export const WatchdogDuty = {
  /** Write StallStart / StallEnd. */
  StallEvents: 1,
  /** Deliver the main thread's GC pauses while its loop is blocked. */
  GcDuringStalls: 2,
  /** Ring the sampler of a resting loop when its thread runs again (where the native addon's turn meter cannot). */
  WakeRestingLoop: 4,
  /** Write the main thread's CPU samples while its loop is blocked. */
  CpuSamplesDuringStalls: 8,
} as const;

/** The duties that watch for stalls (a watchdog with only WakeRestingLoop needs no beats). */
export const STALL_DUTIES = WatchdogDuty.StallEvents | WatchdogDuty.GcDuringStalls | WatchdogDuty.CpuSamplesDuringStalls;

type WaitAsync = (a: Int32Array, index: number, value: number) => { async: false } | { async: true; value: Promise<string> };
/** Node 20 has it; TypeScript's ES2022 library does not declare it yet. */
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export interface WatchdogCounters {
  readonly beats: number;
  readonly polls: number;
  readonly rings: number;
  readonly resting: boolean;
}

export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

export class Heartbeat {
  readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(readonly sab: SharedArrayBuffer = Heartbeat.allocate()) {
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
  }

  private static allocate(): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(BYTES);
    new Float64Array(sab)[F64.StallFromMs] = NaN;
    return sab;
  }

  // ---- the watched thread's side

  beat(): void {
    this.f64[F64.LastBeatMs] = monotonicMs();
    Atomics.add(this.i32, Word.Beat, 1);
    if (Atomics.load(this.i32, Word.Listening) !== 0) this.wake();
  }

  /** The sampler stops beating at `sinceMs`: `at` is the thread's schedstat as it does. */
  restWithSched(sinceMs: number, at: SchedSample): void {
    this.f64[F64.RestRunnableNs] = at.runnableNs;
    Atomics.store(this.i32, Word.RestArrivals, at.arrivals);
    this.markResting(sinceMs);
  }

  /** The sampler stops beating at `sinceMs`: `idleMs` is its loop's idle time as it does. */
  restWithIdle(sinceMs: number, idleMs: number): void {
    this.f64[F64.RestIdleMs] = idleMs;
    this.markResting(sinceMs);
  }

  private markResting(sinceMs: number): void {
    this.f64[F64.RestSinceMs] = sinceMs;
    Atomics.store(this.i32, Word.Resting, 1);
  }

  /** The sampler beats again (the beat that follows tells the watchdog). */
  resume(): void {
    Atomics.store(this.i32, Word.Resting, 0);
  }

  /** Resolves when the watchdog rings (a pending wait keeps no event loop alive). */
  doorbell(): Promise<unknown> {
    const r = waitAsync(this.i32, Word.Ring, Atomics.load(this.i32, Word.Ring));
    return r.async ? r.value : Promise.resolve();
  }

  /** When the watchdog reckons the thread woke before it rang (NaN: not known), and when it rang. */
  get wokeAtMs(): number {
    return this.f64[F64.WokeAtMs]!;
  }

  get ringAtMs(): number {
    return this.f64[F64.RingAtMs]!;
  }

  /** When the stall the watchdog is reporting began (NaN: none). */
  get stallFromMs(): number {
    return this.f64[F64.StallFromMs]!;
  }

  set stallFromMs(ms: number) {
    this.f64[F64.StallFromMs] = ms;
  }

  set stallMs(ms: number) {
    Atomics.store(this.i32, Word.StallMs, ms);
    this.wake();
  }

  set duties(bits: number) {
    Atomics.store(this.i32, Word.Duties, bits);
    this.wake();
  }

  stop(): void {
    Atomics.store(this.i32, Word.Stop, 1);
    this.wake();
  }

  // ---- the watchdog's side

  get count(): number {
    return Atomics.load(this.i32, Word.Beat);
  }

  get lastBeatMs(): number {
    return this.f64[F64.LastBeatMs]!;
  }

  get stallMs(): number {
    return Atomics.load(this.i32, Word.StallMs);
  }

  get duties(): number {
    return Atomics.load(this.i32, Word.Duties);
  }

  get stopped(): boolean {
    return Atomics.load(this.i32, Word.Stop) !== 0;
  }

  get resting(): boolean {
    return Atomics.load(this.i32, Word.Resting) !== 0;
  }

  /** Where the thread's schedstat stood when it began resting; returns when that was. */
  restBaseline(into: SchedSample): number {
    into.arrivals = Atomics.load(this.i32, Word.RestArrivals);
    into.runnableNs = this.f64[F64.RestRunnableNs]!;
    return this.restSinceMs;
  }

  /** When the thread began resting. */
  get restSinceMs(): number {
    return this.f64[F64.RestSinceMs]!;
  }

  /** Its loop's idle time then (the loop-idle route). */
  get restIdleMs(): number {
    return this.f64[F64.RestIdleMs]!;
  }

  /** A resting thread has run since it began resting: ask it to answer (it does when its loop turns). */
  ring(wokeAtMs: number): void {
    this.f64[F64.WokeAtMs] = wokeAtMs;
    this.f64[F64.RingAtMs] = monotonicMs();
    Atomics.add(this.i32, Word.Rings, 1);
    this.releaseDoorbell();
  }

  /** Resolves a pending doorbell (a ring, or the sampler letting go of this heartbeat). */
  releaseDoorbell(): void {
    Atomics.add(this.i32, Word.Ring, 1);
    Atomics.notify(this.i32, Word.Ring);
  }

  countPoll(): void {
    Atomics.add(this.i32, Word.Polls, 1);
  }

  /** Beats, readings of a resting thread and rings so far, and whether it rests now (for tests and diagnostics). */
  get counters(): WatchdogCounters {
    return { beats: this.count, polls: Atomics.load(this.i32, Word.Polls), rings: Atomics.load(this.i32, Word.Rings), resting: this.resting };
  }

  set listening(on: boolean) {
    Atomics.store(this.i32, Word.Listening, on ? 1 : 0);
  }

  /**
   * Sleeps (synchronously: the watchdog has nothing else to do meanwhile) until a stop, a new setting,
   * a beat while listening, or `ms`. `seen` is the wake count read before the checks that led here.
   */
  sleep(seen: number, ms: number): void {
    Atomics.wait(this.i32, Word.Wake, seen, Math.max(0, ms));
  }

  get wakeCount(): number {
    return Atomics.load(this.i32, Word.Wake);
  }

  private wake(): void {
    Atomics.add(this.i32, Word.Wake, 1);
    Atomics.notify(this.i32, Word.Wake);
  }
}
