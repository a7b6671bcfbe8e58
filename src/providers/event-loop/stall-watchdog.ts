import { workerThreads } from '../../schema/this-thread.js';
import { makeServiceWorker, markServiceWorker } from '../../session/service-workers.js';
import { threadGcRing } from '../gc-hook.js';
import { SERVICE_THREAD_KEY } from '../../session/service-thread.js';
import { Heartbeat, monotonicMs, STALL_DUTIES, WatchdogDuty, type WatchdogCounters } from './heartbeat.js';
import { elapsedMs } from '../../schema/milliseconds.js';
import { errorMessage } from '../../schema/error-message.js';
import { runtimeEventLoop } from '../definitions/event-loop.js';
import { useLoopSampler, watchLoopSampler } from './loop-sampler.js';
import { mainRestRoute, type RestRoute } from './rest-clock.js';

/** How often the watched loop beats while it has work: often enough to time a stall to within a tenth of its threshold. */
export function beatIntervalMs(stallMs: number): number {
  return Math.max(1, Math.min(10, Math.floor(stallMs / 10)));
}

/** The thread whose loop the watchdog watches, as its events name it. */
const MAIN_THREAD = 0;

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
 * How long the main thread's loop is watched from this thread before the watchdog's own thread
 * starts: a program that ends sooner (`node -e 0`, a CLI, a build step) never pays for an isolate
 * (~30 ms and ~9 MB, BENCHMARKS.md §38). TRACEPIPE_WATCHDOG_AFTER_MS sets it (0: at once).
 */
function threadAfterMs(): number {
  const set = process.env.TRACEPIPE_WATCHDOG_AFTER_MS;
  const ms = set === undefined || set.trim() === '' ? NaN : Number(set);
  return Number.isFinite(ms) && ms >= 0 ? ms : 1000;
}

/**
 * The main thread's watchdog worker (unref'd, so it never keeps the process alive). It reads the
 * heartbeat the thread's loop sampler beats, and writes its events itself.
 *
 * For its first second or so (threadAfterMs; unless it must write CPU samples during stalls, which wait in a
 * small queue meanwhile), this thread watches its own loop with an unref'd timer due every beat
 * interval, then starts the watchdog's thread at a turn. A stretch that kept the loop from turning
 * for longer than the watchdog allows (StallMs and a beat) is reported as the watchdog reports a
 * stall it could not look at in time: once it ends, a StallStart and its StallEnd, from the last
 * turn on; if the process exits inside it, a StallStart only (Runtime.EventLoop's flush). Its GC
 * pauses wait in the GC ring until the thread takes them, as they would in any turn.
 */
class StallWatchdog {
  readonly hb = new Heartbeat();
  /** Until the thread starts: when the watch began, the last turn seen, the timer, whether the stretch's StallStart is written. */
  private early: { readonly sinceMs: number; afterMs: number; lastTurnMs: number; timer: ReturnType<typeof setTimeout> | undefined; started: boolean } | undefined;

  constructor(stallMs: number, duties: number) {
    this.configure(stallMs, duties);
    this.hb.beat();
    const afterMs = threadAfterMs();
    if (afterMs === 0 || duties & WatchdogDuty.CpuSamplesDuringStalls) this.startThread();
    else {
      const now = monotonicMs();
      this.early = { sinceMs: now, afterMs, lastTurnMs: now, timer: undefined, started: false };
      this.watchEarly();
    }
  }

  private watchEarly(): void {
    const early = this.early!;
    early.timer = setTimeout(() => {
      // Its exception would be the application's uncaught one: tracepipe's are warnings, as in onEnable.
      try {
        this.reportStretch(true);
        early.lastTurnMs = monotonicMs();
        early.started = false;
        if (early.lastTurnMs - early.sinceMs >= early.afterMs) this.startThread();
        else this.watchEarly();
      } catch (e) {
        process.emitWarning(`tracepipe: the event-loop watchdog failed: ${errorMessage(e)}; stalls are no longer watched`);
      }
    }, beatIntervalMs(this.hb.stallMs));
    early.timer.unref();
  }

  /**
   * Whether its thread runs: until then the loop sampler is not its to wake (a resting sampler would
   * wait for a ring nobody sends, and the thread, once up, would take its stale rest for a stall).
   */
  get threadRuns(): boolean {
    return this.early === undefined;
  }

  private startThread(): void {
    const early = this.early;
    if (early?.timer) clearTimeout(early.timer);
    this.early = undefined;
    if (early && watchdog === this) {
      // The thread reads the loop from now on: its last beat is this turn.
      this.hb.beat();
      watchLoopSampler(this.hb);
    }
    const data: WatchdogData = { [SERVICE_THREAD_KEY]: true, heartbeat: this.hb.sab, gcRing: threadGcRing()?.sab, restRoute: mainRestRoute() };
    const worker = makeServiceWorker(() => new (workerThreads().Worker)(new URL('../../workers/event-loop-watchdog.js', import.meta.url), { workerData: data, execArgv: [], stdout: false, stderr: false }));
    markServiceWorker(worker, 'tracepipe-watchdog');
    worker.on('error', (e) => process.emitWarning(`tracepipe: the event-loop watchdog failed: ${e.message}; stalls are no longer watched`));
    worker.on('exit', (code) => {
      if (code !== 0) process.emitWarning(`tracepipe: the event-loop watchdog exited with code ${code}; stalls are no longer watched`);
    });
    worker.unref();
  }

  /**
   * Before the thread runs: the stretch since the last turn this thread saw, when it is a stall. A
   * loop waiting for I/O wakes for the timer, which is due every beat interval: its lateness is work.
   * `ended`: the loop turns again (a StallEnd follows); else the thread exits or a session stops
   * inside it (written as begun, once).
   */
  reportStretch(ended: boolean): void {
    const early = this.early;
    if (!early || !(this.hb.duties & WatchdogDuty.StallEvents)) return;
    const blockedMs = elapsedMs(early.lastTurnMs, monotonicMs());
    const stallMs = this.hb.stallMs;
    if (blockedMs < stallMs + beatIntervalMs(stallMs)) return;
    if (!early.started) runtimeEventLoop.StallStart.write(MAIN_THREAD, blockedMs);
    early.started = true;
    if (ended) runtimeEventLoop.StallEnd.write(MAIN_THREAD, blockedMs);
  }

  configure(stallMs: number, duties: number): void {
    // The sessions that asked for stall events stop: the stretch under way is theirs, as begun.
    if (!(duties & WatchdogDuty.StallEvents)) this.reportStretch(false);
    this.hb.duties = duties;
    if (stallMs !== this.hb.stallMs) this.hb.stallMs = stallMs;
    // At the early timer's next turn (a beat at most): the stretch under way is reported there first.
    if (this.early && duties & WatchdogDuty.CpuSamplesDuringStalls) this.early.afterMs = 0;
  }

  stop(): void {
    this.reportStretch(false);
    if (this.early?.timer) clearTimeout(this.early.timer);
    this.early = undefined;
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
  watchLoopSampler(watchdog?.threadRuns ? watchdog.hb : undefined);
}

/**
 * Runtime.EventLoop's flush (the main thread exits, or a session stops): a stretch blocked since the
 * last turn, before the watchdog's thread runs, is written as a stall begun.
 */
export function reportUnwatchedStall(): void {
  watchdog?.reportStretch(false);
}

/**
 * The main thread's watchdog counters (beats, readings of the resting thread, doorbell rings), or
 * undefined when no watchdog runs: for tests and diagnostics.
 */
export function watchdogCounters(): WatchdogCounters | undefined {
  return watchdog?.hb.counters;
}
