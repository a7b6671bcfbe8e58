/**
 * The GC pauses the watchdog already wrote for the main thread while its loop was blocked, so the
 * main thread's observer, which hears of the same pauses once the loop turns, skips them. A ring of
 * start times (ns on the process monotonic clock) in shared memory; the watchdog appends, the main
 * thread consumes in order. While a window is open (a stall being traced) the watchdog may still
 * claim any pause that started after the window opened: the main thread holds those back until it
 * closes.
 */
const CAPACITY = 4096;
/**
 * The two sources usually time the same pause's start within ~15 µs, but a descheduled thread on a
 * loaded machine can stretch that; distinct pauses start at least one pause plus some mutator time
 * apart, well over 0.5 ms in practice.
 */
const SAME_PAUSE_NS = 500_000;

export class GcHandoff {
  /** [claims written, claims the main thread has taken in, window open]. */
  private readonly counts: Int32Array;
  private readonly starts: Float64Array;
  private readonly window: Float64Array;
  /** Claimed starts not yet matched by the observer, oldest first. */
  private pending: number[] = [];

  constructor(readonly sab: SharedArrayBuffer = new SharedArrayBuffer(24 + 8 * CAPACITY)) {
    this.counts = new Int32Array(sab, 0, 3);
    this.window = new Float64Array(sab, 16, 1);
    this.starts = new Float64Array(sab, 24, CAPACITY);
  }

  /** Since when (ns) the open window's pauses may be claimed; NaN when no window is open. */
  get windowStartNs(): number {
    return Atomics.load(this.counts, 2) === 1 ? this.window[0]! : NaN;
  }

  /** Watchdog side: pauses from `startNs` on may be claimed until closeWindow(). */
  openWindow(startNs: number): void {
    this.window[0] = startNs;
    Atomics.store(this.counts, 2, 1);
  }

  /** Watchdog side: every claim of the window is in the ring (the atomic store orders them first). */
  closeWindow(): void {
    Atomics.store(this.counts, 2, 0);
  }

  /**
   * Watchdog side: may it write the pause starting at `startNs`? When the ring is full (the main
   * thread has not caught up), no: the observer will write that pause once the loop turns.
   */
  claim(startNs: number): boolean {
    const n = this.counts[0]!;
    if (n - Atomics.load(this.counts, 1) >= CAPACITY) return false;
    this.starts[n % CAPACITY] = startNs;
    Atomics.store(this.counts, 0, n + 1);
    return true;
  }

  /** Main side: was the pause starting at `startNs` already written by the watchdog? */
  claimed(startNs: number): boolean {
    const n = Atomics.load(this.counts, 0);
    for (let i = this.counts[1]!; i < n; i++) this.pending.push(this.starts[i % CAPACITY]!);
    Atomics.store(this.counts, 1, n);
    if (this.pending.length === 0) return false;
    // Pauses reach the observer in order: claims older than this one will never match.
    while (this.pending.length > 0 && this.pending[0]! < startNs - SAME_PAUSE_NS) this.pending.shift();
    if (this.pending.length > 0 && Math.abs(this.pending[0]! - startNs) <= SAME_PAUSE_NS) {
      this.pending.shift();
      return true;
    }
    return false;
  }
}
