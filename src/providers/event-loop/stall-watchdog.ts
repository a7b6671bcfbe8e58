import { requireBuiltin } from '../../schema/this-thread.js';
import { makeServiceWorker, markServiceWorker } from '../../session/service-workers.js';
import { threadGcRing } from '../gc-hook.js';
import { SERVICE_THREAD_KEY } from '../../session/service-thread.js';
import { Heartbeat, STALL_DUTIES, WatchdogDuty, type WatchdogCounters } from './heartbeat.js';
import { useLoopSampler, watchLoopSampler } from './loop-sampler.js';
import { mainRestRoute, type RestRoute } from './rest-clock.js';
const { Worker } = requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');

/** How often the watched loop beats while it has work: often enough to time a stall to within a tenth of its threshold. */
export function beatIntervalMs(stallMs: number): number {
  return Math.max(1, Math.min(10, Math.floor(stallMs / 10)));
}

/** StallMs when no duty that watches for stalls asked for one. */
const DEFAULT_STALL_MS = 100;

export interface WatchdogData {
  readonly [SERVICE_THREAD_KEY]: true;
  readonly heartbeat: SharedArrayBuffer;
  /** The main thread's GC ring, when it has the GC hook. */
  readonly gcRing: SharedArrayBuffer | undefined;
  /** How the main thread's rest is read (the route its sampler leaves baselines for). */
  readonly restRoute: RestRoute;
}

/**
 * The main thread's watchdog worker (unref'd, so it never keeps the process alive). It reads the
 * heartbeat the thread's loop sampler beats, and writes its events itself.
 */
class StallWatchdog {
  readonly hb = new Heartbeat();

  constructor(stallMs: number, duties: number) {
    const data: WatchdogData = { [SERVICE_THREAD_KEY]: true, heartbeat: this.hb.sab, gcRing: threadGcRing()?.sab, restRoute: mainRestRoute() };
    this.configure(stallMs, duties);
    this.hb.beat();
    const worker = makeServiceWorker(() => new Worker(new URL('../../workers/event-loop-watchdog.js', import.meta.url), { workerData: data, execArgv: [], stdout: false, stderr: false }));
    markServiceWorker(worker, 'tracepipe-watchdog');
    worker.on('error', (e) => process.emitWarning(`tracepipe: the event-loop watchdog failed: ${e.message}; stalls are no longer watched`));
    worker.on('exit', (code) => {
      if (code !== 0) process.emitWarning(`tracepipe: the event-loop watchdog exited with code ${code}; stalls are no longer watched`);
    });
    worker.unref();
  }

  configure(stallMs: number, duties: number): void {
    this.hb.duties = duties;
    if (stallMs !== this.hb.stallMs) this.hb.stallMs = stallMs;
  }

  stop(): void {
    this.hb.stop();
  }
}

let watchdog: StallWatchdog | undefined;
/** Duty → the StallMs its provider asked for (WakeRestingLoop asks for none: Infinity). */
const duties = new Map<number, number>();

/**
 * Runtime.EventLoop (stall events; waking the Delay sampler from rest) and Runtime.GC (pauses during
 * stalls) share one watchdog for the main thread: each sets or clears its duty; the smallest StallMs
 * wins; no duty, no watchdog. Stall duties need the sampler's beats, so they keep it running too.
 */
export function setWatchdogDuty(duty: (typeof WatchdogDuty)[keyof typeof WatchdogDuty], stallMs: number | undefined): void {
  if (stallMs === undefined) duties.delete(duty);
  else duties.set(duty, stallMs);
  let bits = 0;
  for (const d of duties.keys()) bits |= d;
  const asked = Math.min(...duties.values());
  const ms = Number.isFinite(asked) ? asked : DEFAULT_STALL_MS;
  // The watchdog learns first that stalls are no longer its business, then the beats may stop.
  if (duties.size === 0) {
    watchdog?.stop();
    watchdog = undefined;
  } else if (watchdog) watchdog.configure(ms, bits);
  else watchdog = new StallWatchdog(ms, bits);
  useLoopSampler('stalls', bits & STALL_DUTIES ? beatIntervalMs(ms) : undefined);
  watchLoopSampler(watchdog?.hb);
}

/**
 * The main thread's watchdog counters (beats, readings of the resting thread, doorbell rings), or
 * undefined when no watchdog runs: for tests and diagnostics.
 */
export function watchdogCounters(): WatchdogCounters | undefined {
  return watchdog?.hb.counters;
}
