import { SchedSample, ThreadSchedStat } from '../session/thread-schedstat.js';

/**
 * Asks the kernel whether producing threads still run: on a CPU, or ready and waiting for one. A
 * stopping drain must not take its final count while such a thread may be between a write's check and
 * its commit (descheduled on a loaded machine, it can be quiet for hundreds of ms and then commit),
 * or computing towards its rundown. A thread asleep (its event loop idle, blocked in Atomics.wait)
 * cannot commit until it wakes. Linux only: elsewhere no thread is known to run.
 */
/**
 * The kernel adds a running thread's CPU time at its scheduler ticks (every 1-4 ms), so a look over a
 * few ms can see none: each verdict covers at least this long.
 */
const LOOK_MS = 20;

export class RunningThreads {
  private readonly stats = new Map<number, ThreadSchedStat | undefined>();
  private readonly last = new Map<number, number>();
  private readonly sample = new SchedSample();
  private lastLookMs = -Infinity;
  private running = false;

  /**
   * Whether any of `tids` was runnable for at least half of the time since the previous look (which
   * the first look only starts); looks less than LOOK_MS apart give the previous verdict. A thread
   * whose file cannot be read has ended.
   */
  anyRunning(tids: readonly number[], nowMs: number): boolean {
    if (nowMs - this.lastLookMs < LOOK_MS) return this.running;
    const elapsedNs = (nowMs - this.lastLookMs) * 1e6;
    this.lastLookMs = nowMs;
    let running = false;
    for (const tid of tids) {
      if (tid === 0) continue;
      if (!this.stats.has(tid)) this.stats.set(tid, ThreadSchedStat.ofThread(tid));
      const stat = this.stats.get(tid);
      if (stat === undefined || !stat.read(this.sample)) continue;
      const before = this.last.get(tid);
      this.last.set(tid, this.sample.runnableNs);
      if (before !== undefined && this.sample.runnableNs - before >= elapsedNs / 2) running = true;
    }
    this.running = running;
    return running;
  }

  close(): void {
    for (const stat of this.stats.values()) stat?.close();
    this.stats.clear();
  }
}
