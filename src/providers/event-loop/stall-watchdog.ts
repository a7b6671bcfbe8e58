import { Worker } from 'node:worker_threads';
import { markServiceWorker } from '../../session/service-workers.js';
import { threadGcRing } from '../gc-hook.js';
import { Heartbeat, WatchdogDuty } from './heartbeat.js';
import { SERVICE_THREAD_KEY } from '../service-thread.js';

/** How often the watched loop beats: often enough to time a stall to within a tenth of its threshold. */
export function beatIntervalMs(stallMs: number): number {
  return Math.max(1, Math.min(10, Math.floor(stallMs / 10)));
}

export interface WatchdogData {
  readonly [SERVICE_THREAD_KEY]: true;
  readonly heartbeat: SharedArrayBuffer;
  /** The main thread's GC ring, when it has the GC hook. */
  readonly gcRing: SharedArrayBuffer | undefined;
}

/**
 * The main thread's half of stall detection: a heartbeat timer (unref'd, so it never keeps the
 * process alive) and the watchdog worker that reads it. The worker writes its events itself.
 */
class StallWatchdog {
  readonly hb = new Heartbeat();
  private timer: NodeJS.Timeout | undefined;
  private stallMs = 0;

  constructor(stallMs: number, duties: number) {
    const data: WatchdogData = { [SERVICE_THREAD_KEY]: true, heartbeat: this.hb.sab, gcRing: threadGcRing()?.sab };
    this.configure(stallMs, duties);
    this.hb.beat();
    const worker = new Worker(new URL('../../workers/event-loop-watchdog.js', import.meta.url), { workerData: data, execArgv: [], stdout: false, stderr: false });
    markServiceWorker(worker, 'tracepipe-watchdog');
    worker.on('error', (e) => process.emitWarning(`tracepipe: the event-loop watchdog failed: ${e.message}; stalls are no longer watched`));
    worker.on('exit', (code) => {
      if (code !== 0) process.emitWarning(`tracepipe: the event-loop watchdog exited with code ${code}; stalls are no longer watched`);
    });
    worker.unref();
  }

  configure(stallMs: number, duties: number): void {
    this.hb.duties = duties;
    if (stallMs === this.stallMs) return;
    this.stallMs = stallMs;
    this.hb.stallMs = stallMs;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.hb.beat(), beatIntervalMs(stallMs));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.hb.stop();
  }
}

let watchdog: StallWatchdog | undefined;
/** Duty → the StallMs its provider asked for. */
const duties = new Map<number, number>();

/**
 * Runtime.EventLoop (stall events) and Runtime.GC (pauses during stalls) share one watchdog for the
 * main thread: each sets or clears its duty; the smallest StallMs wins; no duty, no watchdog.
 */
export function setWatchdogDuty(duty: (typeof WatchdogDuty)[keyof typeof WatchdogDuty], stallMs: number | undefined): void {
  if (stallMs === undefined) duties.delete(duty);
  else duties.set(duty, stallMs);
  if (duties.size === 0) {
    watchdog?.stop();
    watchdog = undefined;
    return;
  }
  let bits = 0;
  for (const d of duties.keys()) bits |= d;
  const ms = Math.min(...duties.values());
  if (watchdog) watchdog.configure(ms, bits);
  else watchdog = new StallWatchdog(ms, bits);
}
