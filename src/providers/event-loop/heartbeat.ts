/**
 * A word the main thread bumps from a timer while its event loop turns, and the time of the last
 * bump, in a SharedArrayBuffer a watchdog thread reads without needing that loop.
 */
const enum Word {
  Beat = 0,
  Stop = 1,
  StallMs = 2,
  /** The watchdog sleeps on Beat until the stall ends: each beat must wake it. */
  Waiting = 3,
  /** What the watchdog does during a stall (WatchdogDuty bits). */
  Duties = 4,
}
/** Float64 index of the last beat's time (ms on the process monotonic clock). */
const BEAT_TIME = 3;
const BYTES = 32;

export const WatchdogDuty = {
  /** Write StallStart / StallEnd. */
  StallEvents: 1,
  /** Deliver the main thread's GC pauses while its loop is blocked. */
  GcDuringStalls: 2,
} as const;

type WaitAsync = (a: Int32Array, index: number, value: number, timeoutMs: number) => { async: false } | { async: true; value: Promise<string> };
/** Node 20 has it; TypeScript's ES2022 library does not declare it yet. */
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

export class Heartbeat {
  readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(readonly sab: SharedArrayBuffer = new SharedArrayBuffer(BYTES)) {
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
  }

  beat(): void {
    this.f64[BEAT_TIME] = monotonicMs();
    Atomics.add(this.i32, Word.Beat, 1);
    if (Atomics.load(this.i32, Word.Waiting) !== 0) Atomics.notify(this.i32, Word.Beat);
  }

  get count(): number {
    return Atomics.load(this.i32, Word.Beat);
  }

  get lastBeatMs(): number {
    return this.f64[BEAT_TIME]!;
  }

  get stallMs(): number {
    return Atomics.load(this.i32, Word.StallMs);
  }

  set stallMs(ms: number) {
    Atomics.store(this.i32, Word.StallMs, ms);
    Atomics.notify(this.i32, Word.Stop);
  }

  get duties(): number {
    return Atomics.load(this.i32, Word.Duties);
  }

  set duties(bits: number) {
    Atomics.store(this.i32, Word.Duties, bits);
  }

  get stopped(): boolean {
    return Atomics.load(this.i32, Word.Stop) !== 0;
  }

  stop(): void {
    Atomics.store(this.i32, Word.Stop, 1);
    Atomics.notify(this.i32, Word.Stop);
    Atomics.notify(this.i32, Word.Beat);
  }

  set waiting(on: boolean) {
    Atomics.store(this.i32, Word.Waiting, on ? 1 : 0);
  }

  /** Resolves when `word` changes from `value`, or after `ms`. */
  waitFor(word: 'beat' | 'stop', value: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      // The timer also holds the waiting thread's event loop open, which a pending waitAsync does not.
      const timer = setTimeout(resolve, ms);
      const r = waitAsync(this.i32, word === 'beat' ? Word.Beat : Word.Stop, value, ms);
      if (!r.async) {
        clearTimeout(timer);
        resolve();
      } else {
        void r.value.then(() => {
          clearTimeout(timer);
          resolve();
        });
      }
    });
  }
}
