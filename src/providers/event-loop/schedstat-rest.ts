import { type Heartbeat, monotonicMs } from './heartbeat.js';
import type { RestClock, RestProbe } from './rest-clock.js';
import { SchedSample, ThreadSchedStat } from '../../session/thread-schedstat.js';

/**
 * Runnable time a resting thread may add without being taken for awake: the rest of the turn in which
 * it began resting, after its reading.
 */
const REST_TAIL_NS = 1e6;
/**
 * How far a running thread's schedstat may lag: Linux brings its runnable time up to date at context
 * switches and scheduler ticks (every 1 to 10 ms). A wake reckoned from it is put this much earlier,
 * so a stall is over-estimated by at most this, as one timed from beats is by at most a beat.
 */
const SCHED_LAG_MS = 10;

/** The main thread's own: its runnable time and arrivals as it begins resting. */
export class SchedStatRestClock implements RestClock {
  private readonly reading = new SchedSample();

  private constructor(private readonly sched: ThreadSchedStat) {}

  static open(): SchedStatRestClock | undefined {
    const sched = ThreadSchedStat.ofThisThread();
    return sched && new SchedStatRestClock(sched);
  }

  markRest(hb: Heartbeat, sinceMs: number): boolean {
    if (!this.sched.read(this.reading)) return false;
    hb.restWithSched(sinceMs, this.reading);
    return true;
  }

  close(): void {
    this.sched.close();
  }
}

/**
 * The watchdog's: a resting thread is asleep as long as it has not run since (no new arrival on a
 * CPU); a thread that has been running since it woke has been runnable exactly that long (exact but
 * for the schedstat's lag: while it runs, Linux has not yet counted its current slice).
 */
export class SchedStatProbe implements RestProbe {
  readonly lagMs = SCHED_LAG_MS;
  private readonly base = new SchedSample();
  private readonly now = new SchedSample();

  private constructor(private readonly sched: ThreadSchedStat) {}

  static open(): SchedStatProbe | undefined {
    // The main thread's id as the kernel knows it is the process id.
    const sched = ThreadSchedStat.ofThread(process.pid);
    return sched && new SchedStatProbe(sched);
  }

  takeBaseline(hb: Heartbeat): number {
    return hb.restBaseline(this.base);
  }

  stillResting(): boolean {
    return this.sched.read(this.now) && this.now.arrivals === this.base.arrivals && this.now.runnableNs - this.base.runnableNs < REST_TAIL_NS;
  }

  wokeAtMs(): number {
    return this.sched.read(this.now) ? monotonicMs() - (this.now.runnableNs - this.base.runnableNs) / 1e6 - SCHED_LAG_MS : NaN;
  }

  sleepWhileResting(hb: Heartbeat, seen: number, pollMs: number): void {
    hb.sleep(seen, pollMs);
  }

  close(): void {
    this.sched.close();
  }
}
