import { SchedSample, ThreadSchedStat } from '../session/thread-schedstat.js';

/**
 * A thread's schedstat counts its wait for a CPU only once it gets one, and on a loaded machine that
 * wait can be tens of ms: over a few ms a thread that never stopped running can show nothing. So the
 * verdict is over the whole time since `mark`, a quiet period's start, and a quarter of it runnable
 * is running (a thread asleep in epoll or Atomics.wait adds microseconds).
 */
const RUNNING_SHARE = 0.25;

/**
 * Asks the kernel whether producing threads still run: on a CPU, or ready and waiting for one. A
 * stopping drain must not take its final count while such a thread may be between a write's check and
 * its commit (descheduled on a loaded machine, it can be quiet for hundreds of ms and then commit),
 * or computing towards its rundown. A thread asleep (its event loop idle, blocked in Atomics.wait)
 * cannot commit until it wakes. Linux only: elsewhere no thread is known to run.
 */
export class RunningThreads {
  private readonly stats = new Map<number, ThreadSchedStat | undefined>();
  private readonly marks = new Map<number, number>();
  private readonly sample = new SchedSample();
  private markMs = 0;

  /** Starts a period: what `tids` have been runnable so far. */
  mark(tids: readonly number[], nowMs: number): void {
    this.markMs = nowMs;
    this.marks.clear();
    for (const tid of tids) {
      const ns = this.runnableNs(tid);
      if (ns !== undefined) this.marks.set(tid, ns);
    }
  }

  /**
   * Whether any of `tids` was runnable (on a CPU, or ready and waiting for one) for at least
   * RUNNING_SHARE of the time since `mark`. A thread whose file cannot be read has ended.
   */
  anyRunning(tids: readonly number[], nowMs: number): boolean {
    const elapsedNs = (nowMs - this.markMs) * 1e6;
    for (const tid of tids) {
      const before = this.marks.get(tid);
      const ns = before === undefined ? undefined : this.runnableNs(tid);
      if (ns !== undefined && ns - before! >= elapsedNs * RUNNING_SHARE) return true;
    }
    return false;
  }

  private runnableNs(tid: number): number | undefined {
    if (tid === 0) return undefined;
    if (!this.stats.has(tid)) this.stats.set(tid, ThreadSchedStat.ofThread(tid));
    const stat = this.stats.get(tid);
    return stat !== undefined && stat.read(this.sample) ? this.sample.runnableNs : undefined;
  }

  close(): void {
    for (const stat of this.stats.values()) stat?.close();
    this.stats.clear();
  }
}
