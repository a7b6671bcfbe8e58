import { runOwnTimer } from './event-loop/loop-sampler.js';
import { errorMessage } from '../schema/error-message.js';

interface Job {
  everyMs: number;
  dueMs: number;
  readonly run: () => void;
}

export interface Ticking {
  /** Changes the interval (from the next tick on). */
  setInterval(sec: number): void;
  stop(): void;
}

const jobs = new Set<Job>();
let timer: NodeJS.Timeout | undefined;
/**
 * A job due within this share of its interval runs in the tick: a Node.js timer counts from the
 * loop's cached time, so it may fire a little before the due time on this clock.
 */
const SLACK_SHARE = 0.1;

/** The next multiple of `everyMs` after `now`: jobs with the same interval share their ticks. */
function nextDue(everyMs: number, now: number): number {
  return (Math.floor(now / everyMs) + 1) * everyMs;
}

function schedule(): void {
  clearTimeout(timer);
  timer = undefined;
  if (jobs.size === 0) return;
  let due = Infinity;
  for (const j of jobs) due = Math.min(due, j.dueMs);
  timer = setTimeout(() => setImmediate(tick), Math.max(0, Math.ceil(due - performance.now())));
  timer.unref();
}

/**
 * Runs in the check phase after the timer: a loop that was just blocked has run its overdue timers
 * (the loop sampler's among them) before the jobs read their figures.
 */
function tick(): void {
  const now = performance.now();
  runOwnTimer(() => {
    for (const j of jobs) {
      if (j.dueMs > now + j.everyMs * SLACK_SHARE) continue;
      j.dueMs = nextDue(j.everyMs, now + j.everyMs * SLACK_SHARE);
      try {
        j.run();
      } catch (e) {
        process.emitWarning(`tracepipe: a provider's periodic sample threw: ${errorMessage(e)}`);
      }
    }
  });
  schedule();
}

/**
 * Runs `run` every `sec` seconds on this thread, on one timer shared by every provider's periodic
 * work: intervals are aligned to multiples of themselves, so providers sampling at the same interval
 * wake the thread once, together (unref'd: it never keeps the thread alive).
 */
export function everyInterval(sec: number, run: () => void): Ticking {
  const job: Job = { everyMs: sec * 1000, dueMs: nextDue(sec * 1000, performance.now()), run };
  jobs.add(job);
  schedule();
  return {
    setInterval(s: number) {
      job.everyMs = s * 1000;
      job.dueMs = nextDue(job.everyMs, performance.now());
      schedule();
    },
    stop() {
      if (jobs.delete(job)) schedule();
    },
  };
}
