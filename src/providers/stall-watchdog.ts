import { Worker } from 'node:worker_threads';
import { Heartbeat } from './heartbeat.js';
import { SERVICE_THREAD_KEY } from './service-thread.js';

/** How often the watched loop beats: often enough to time a stall to within a tenth of its threshold. */
export function beatIntervalMs(stallMs: number): number {
  return Math.max(1, Math.min(10, Math.floor(stallMs / 10)));
}

export interface WatchdogData {
  readonly [SERVICE_THREAD_KEY]: true;
  readonly heartbeat: SharedArrayBuffer;
}

/**
 * The main thread's half of stall detection: a heartbeat timer (unref'd, so it never keeps the
 * process alive) and the watchdog worker that reads it. The worker writes the stall events itself.
 */
export class StallWatchdog {
  private readonly hb = new Heartbeat();
  private readonly worker: Worker;
  private timer: NodeJS.Timeout;

  constructor(private stallMs: number) {
    this.hb.stallMs = stallMs;
    this.hb.beat();
    this.timer = this.startBeating();
    const data: WatchdogData = { [SERVICE_THREAD_KEY]: true, heartbeat: this.hb.sab };
    this.worker = new Worker(new URL('../workers/event-loop-watchdog.js', import.meta.url), { workerData: data, execArgv: [], stdout: false, stderr: false });
    this.worker.on('error', (e) => process.emitWarning(`tracepipe: the event-loop watchdog failed: ${e.message}; stalls are no longer reported`));
    this.worker.unref();
  }

  private startBeating(): NodeJS.Timeout {
    const t = setInterval(() => this.hb.beat(), beatIntervalMs(this.stallMs));
    t.unref();
    return t;
  }

  setStallMs(ms: number): void {
    if (ms === this.stallMs) return;
    this.stallMs = ms;
    this.hb.stallMs = ms;
    clearInterval(this.timer);
    this.timer = this.startBeating();
  }

  stop(): void {
    clearInterval(this.timer);
    this.hb.stop();
  }
}
