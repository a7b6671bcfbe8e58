import { requireBuiltin, isMainThread as onMainThread } from '../../schema/this-thread.js';
import type { EventLoopUtilization, RecordableHistogram } from 'node:perf_hooks';
import { threadSessions } from '../../session/thread-sessions.js';
import { type Heartbeat, monotonicMs } from './heartbeat.js';
import { mainRestRoute, openRestClock, type RestClock } from './rest-clock.js';
import { type TurnMeter, turnMeter } from './loop-idle-rest.js';
const { createHistogram, performance } = requireBuiltin('node:perf_hooks') as typeof import('node:perf_hooks');
const isMainThread = onMainThread();

/**
 * A period in which the loop slept (waited in epoll) at least this share of the time was idle: the
 * sampler's own timer is what woke the thread. A loop busy a third of the time is not idle, and
 * keeps its sampler (while resting it is sampled only by the watchdog's rings).
 */
const IDLE_SHARE = 0.9;
/** Idle periods in a row after which a watched sampler rests. */
const REST_AFTER_PERIODS = 2;
/**
 * A doorbell answered after at least this much loop activity since the sampler rested means the loop
 * has work: the sampler takes up its timer again. Less is the thread's own timers (a tracepipe tick,
 * a buffer's idle seal) or a short request: it rests on.
 */
const RESUME_ACTIVE_MS = 1;
/**
 * A loop whose activity since the watchdog reckons it woke covers at least this share of the time
 * since has been busy all along: a timer of the sampler's would have been due as it woke.
 */
const BUSY_SINCE_WAKE_SHARE = 0.9;

/**
 * The delay histogram's range (ns) at three significant digits: 1 µs to an hour. Its default range
 * (1 ns to 2^53) holds ~45,000 buckets that each interval's percentiles, mean and reset walk: ~150 µs
 * of a publication at idle, where this range takes ~40 µs. A longer delay is recorded as an hour.
 */
const DELAY_FLOOR_NS = 1_000;
const DELAY_CEILING_NS = 3_600e9;

/** Event-loop delay over one interval (ms), as a timer of the sampler's period would have seen it. */
export interface DelayFigures {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
  readonly samples: number;
}

/**
 * This thread's event-loop sampler: one timer, every `periodMs` while the loop has work, that records
 * how late it runs (the event-loop delay, as perf_hooks' monitorEventLoopDelay measures it) and beats
 * the heartbeat the main thread's watchdog reads. When something can wake it (the main thread, with
 * the native addon or on Linux), a sampler whose loop has had nothing to do for a few periods **rests**: no timer at all, so
 * an idle process sleeps. Where a watchdog runs (it watches for stalls), it sees the thread run again
 * by its CPU time and rings a doorbell; the answer, when the loop turns, is a delay sample measured
 * from when the thread woke. Where none runs, the thread's own turn meter (the native addon's) calls
 * back as the first turn with work ends, with its length: the same sample, with no other thread
 * awake. A loop at rest would have run the timer on time: those periods count as samples of no delay.
 */
class LoopSampler {
  private timer: NodeJS.Timeout | undefined;
  private lastFireMs = monotonicMs();
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private idlePeriods = 0;
  private readonly lateness: RecordableHistogram = createHistogram({ lowest: DELAY_FLOOR_NS, highest: DELAY_CEILING_NS, figures: 3 });
  /**
   * Readings recorded since the last delay figures: the histogram's count, kept here because an idle
   * loop's interval has none, and then neither its count nor its reset (a walk of every bucket) is read.
   */
  private recorded = 0;
  /** Periods spent resting since the last delay figures: timer runs that would have been on time. */
  private onTimeSamples = 0;
  /** While resting: since when the resting periods are counted, and the loop's activity when it began. */
  private restingSinceMs: number | undefined;
  private restElu: EventLoopUtilization | undefined;
  private watch: Heartbeat | undefined;
  private stopped = false;

  constructor(
    private periodMs: number,
    /** What tells this thread's rest to the watchdog: without it the sampler never rests under one. */
    private readonly restClock: RestClock | undefined,
    /** What tells this thread's wake without a watchdog: without it the sampler rests only under one. */
    private readonly meter: TurnMeter | undefined,
  ) {
    this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => this.fire(), this.periodMs);
    this.timer.unref();
  }

  setPeriod(ms: number): void {
    if (ms === this.periodMs) return;
    this.periodMs = ms;
    if (this.timer) {
      clearTimeout(this.timer);
      this.arm();
    }
  }

  /** The watchdog that reads this loop's beats and wakes it from rest (undefined: none, never rest). */
  watchedBy(hb: Heartbeat | undefined): void {
    if (hb === this.watch) return;
    const old = this.watch;
    this.watch = hb;
    if (this.restingSinceMs !== undefined) this.resume(monotonicMs(), performance.eventLoopUtilization());
    // A doorbell pending on the old heartbeat is released (its answer finds the sampler awake).
    old?.releaseDoorbell();
    hb?.beat();
  }

  private fire(): void {
    const now = monotonicMs();
    this.record(now - this.lastFireMs - this.periodMs);
    this.lastFireMs = now;
    this.watch?.beat();
    const elu = performance.eventLoopUtilization();
    this.idlePeriods = elu.idle - this.elu.idle >= this.periodMs * IDLE_SHARE ? this.idlePeriods + 1 : 0;
    this.elu = elu;
    if (this.idlePeriods >= REST_AFTER_PERIODS && this.rest(now, elu)) return;
    this.timer!.refresh();
  }

  private record(latenessMs: number): void {
    this.lateness.record(Math.min(DELAY_CEILING_NS, Math.max(1, Math.round(latenessMs * 1e6))));
    this.recorded++;
  }

  /** Stops the timer until the watchdog rings, or the turn meter calls back; false when this loop cannot rest. */
  private rest(now: number, elu: EventLoopUtilization): boolean {
    const hb = this.watch;
    if (!hb) return this.restOnMeter(now);
    if (!this.restClock?.markRest(hb, now)) return false;
    this.timer = undefined;
    this.restingSinceMs = now;
    this.restElu = elu;
    void hb.doorbell().then(() => this.answer(hb));
    return true;
  }

  /** Rests with no watchdog: the thread's turn meter calls back as its first turn with work ends. */
  private restOnMeter(now: number): boolean {
    if (!this.meter) return false;
    this.timer = undefined;
    this.restingSinceMs = now;
    this.meter.arm(RESUME_ACTIVE_MS, this.turnWorked);
    return true;
  }

  /**
   * A turn with `workMs` of work just ended on the resting loop: a timer of the sampler's due as the
   * work began would have run now, that late; the rest before it was on time. The timer resumes.
   */
  private readonly turnWorked = (workMs: number): void => {
    if (this.stopped || this.watch || this.restingSinceMs === undefined) return;
    // Called from libuv as Node calls its own handles: an exception here would be the application's uncaught one.
    try {
      const now = monotonicMs();
      const due = Math.max(this.restingSinceMs, now - workMs);
      this.onTimeSamples += (due - this.restingSinceMs) / this.periodMs;
      this.record(now - due);
      this.restingSinceMs = now;
      this.meterWakes++;
      this.resume(now, performance.eventLoopUtilization());
    } catch (e) {
      process.emitWarning(`tracepipe: the event-loop sampler failed to wake (${(e as Error)?.message ?? String(e)}); it runs its timer from now on`);
      this.restingSinceMs = undefined;
      this.arm();
    }
  };

  /** Turns the meter called back for: for tests and diagnostics. */
  meterWakes = 0;

  get resting(): boolean {
    return this.restingSinceMs !== undefined;
  }

  /** The watchdog rang (the thread ran while resting), and the loop has turned since. */
  private answer(hb: Heartbeat): void {
    if (this.stopped || hb !== this.watch || this.restingSinceMs === undefined) return;
    const now = monotonicMs();
    const elu = performance.eventLoopUtilization();
    // The ring was a timer due when it rang: its lateness is a delay sample. Unless the watchdog
    // found the loop stalled since the thread woke, or the loop has been busy ever since it woke
    // (the watchdog reads a rest only every so often): then the whole time since is the delay.
    const stallFrom = hb.stallFromMs;
    const woke = hb.wokeAtMs;
    const busySinceWake = woke >= this.restingSinceMs && elu.active - this.restElu!.active >= (now - woke) * BUSY_SINCE_WAKE_SHARE;
    const rangDue = stallFrom >= this.restingSinceMs ? stallFrom : hb.ringAtMs || now;
    const due = Math.min(now, Math.max(this.restingSinceMs, busySinceWake ? Math.min(woke, rangDue) : rangDue));
    this.onTimeSamples += (due - this.restingSinceMs) / this.periodMs;
    this.record(now - due);
    if (elu.active - this.restElu!.active >= RESUME_ACTIVE_MS || !this.restClock!.markRest(hb, now)) {
      this.resume(now, elu);
    } else {
      // Nothing of note ran: rest on, from a new reading.
      this.restingSinceMs = now;
      this.restElu = elu;
      void hb.doorbell().then(() => this.answer(hb));
    }
    // The answer is a beat: the watchdog learns that the loop turned (and reads the new rest, if any).
    hb.beat();
  }

  /**
   * The thread ran tracepipe's own timer, for `ownMs`: if resting, the turn meter does not count that,
   * or the watchdog gets a new CPU reading, so it does not take this wake for work and ring. (Like the
   * reading taken as the sampler begins resting, it is taken in a callback: a callback after it in the
   * same turn that blocks in a system call at once, without using the CPU, would look asleep. One that
   * uses the CPU is seen.)
   */
  ownTurnDone(ownMs: number): void {
    const hb = this.watch;
    // The turn meter leaves out this timer's own work only: a block before it in the turn still counts.
    if (!hb && this.restingSinceMs !== undefined) return this.meter?.discount(ownMs);
    if (this.restingSinceMs === undefined || !hb || !this.restClock!.markRest(hb, monotonicMs())) return;
    this.restElu = performance.eventLoopUtilization();
  }

  private resume(now: number, elu: EventLoopUtilization): void {
    this.onTimeSamples += (now - this.restingSinceMs!) / this.periodMs;
    this.restingSinceMs = undefined;
    this.restElu = undefined;
    this.meter?.disarm();
    this.watch?.resume();
    this.lastFireMs = now;
    this.elu = elu;
    this.idlePeriods = 0;
    this.arm();
  }

  /** The delay since the last call (undefined when the loop never turned: no sample at all), and a new interval. */
  takeDelay(): DelayFigures | undefined {
    const now = monotonicMs();
    if (this.restingSinceMs !== undefined) {
      this.onTimeSamples += (now - this.restingSinceMs) / this.periodMs;
      this.restingSinceMs = now;
    }
    const h = this.lateness;
    const n = this.recorded;
    const onTime = this.onTimeSamples;
    const total = n + onTime;
    this.onTimeSamples = 0;
    if (n === 0 && onTime < 1) return undefined;
    // The on-time samples are the lowest: a percentile at or below their share is 0.
    const percentile = (q: number): number => {
      const rank = (q / 100) * total;
      return rank <= onTime || n === 0 ? 0 : h.percentile(Math.min(100, ((rank - onTime) / n) * 100)) / 1e6;
    };
    const figures = {
      p50Ms: percentile(50),
      p99Ms: percentile(99),
      maxMs: n === 0 ? 0 : h.max / 1e6,
      meanMs: n === 0 ? 0 : (h.mean * n) / total / 1e6,
      samples: Math.round(total),
    };
    if (n > 0) h.reset();
    this.recorded = 0;
    return figures;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.meter?.disarm();
    if (this.restingSinceMs !== undefined) {
      this.watch?.resume();
      this.watch?.releaseDoorbell();
    }
    this.restClock?.close();
  }
}

/** Who runs the sampler on this thread, and at what period each wants it. */
export type SamplerUse = 'delay' | 'stalls';
const uses = new Map<SamplerUse, number>();
let sampler: LoopSampler | undefined;
let watch: Heartbeat | undefined;

/** Whether this thread's sampler rests with no watchdog to wake it (the main thread, where the addon's turn meter is). */
export function restsWithoutWatchdog(): boolean {
  return isMainThread && turnMeter !== undefined;
}

/** Whether this thread's sampler could rest under a watchdog (its rest is readable). */
export function loopCanRest(): boolean {
  const clock = openRestClock(mainRestRoute());
  clock?.close();
  return clock !== undefined;
}

/**
 * Starts, re-times or (with `periodMs` undefined) leaves this thread's sampler on behalf of one use:
 * one timer for all of them, at the finest period asked for; none once no use is left.
 */
export function useLoopSampler(use: SamplerUse, periodMs: number | undefined): void {
  if (periodMs === undefined) uses.delete(use);
  else uses.set(use, periodMs);
  if (uses.size === 0) {
    sampler?.stop();
    sampler = undefined;
    return;
  }
  const ms = Math.min(...uses.values());
  if (sampler) sampler.setPeriod(ms);
  else {
    // Only the main thread has a watchdog or a turn meter to wake it, so only it may rest and needs its readings.
    sampler = new LoopSampler(ms, isMainThread ? openRestClock(mainRestRoute()) : undefined, isMainThread ? turnMeter : undefined);
    sampler.watchedBy(watch);
  }
}

/** The main thread's watchdog, which the sampler beats for and which wakes it from rest (undefined: none). */
export function watchLoopSampler(hb: Heartbeat | undefined): void {
  watch = hb;
  sampler?.watchedBy(hb);
}

/**
 * Runs a tracepipe timer's work (providers' periodic samples) on this thread: its events go to the
 * drain at once, not from an idle-seal timer later, and a resting sampler is not rung for this wake.
 */
export function runOwnTimer(work: () => void): void {
  const started = performance.now();
  threadSessions.writeAndHandOver(work);
  sampler?.ownTurnDone(performance.now() - started);
}

/** Whether this thread's sampler rests now, and how often its turn meter woke it: for tests and diagnostics. */
export function loopSamplerState(): { readonly resting: boolean; readonly meterWakes: number } | undefined {
  return sampler && { resting: sampler.resting, meterWakes: sampler.meterWakes };
}

/** The delay this thread's sampler has seen since the last call (see LoopSampler.takeDelay). */
export function takeLoopDelay(): DelayFigures | undefined {
  return sampler?.takeDelay();
}
