import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { Level } from '../../schema/level.js';
import { elapsedMs } from '../../schema/milliseconds.js';
import { defineProvider } from '../../schema/provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../service-thread.js';
import { WatchdogDuty } from './heartbeat.js';
import { everyInterval, type Ticking } from '../interval-ticker.js';
import { loopCanRest, takeLoopDelay, useLoopSampler } from './loop-sampler.js';
import { setWatchdogDuty } from './stall-watchdog.js';

/** The loop sampler's period for delay: what perf_hooks' monitorEventLoopDelay defaults to. */
const RESOLUTION_MS = 10;

/** Delay statistics of this thread's event loop over one interval, from its loop sampler. */
class DelayMonitor {
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private since = performance.now();
  private readonly ticking: Ticking;

  constructor(intervalSec: number) {
    this.ticking = everyInterval(intervalSec, () => this.sample());
  }

  setInterval(sec: number): void {
    this.ticking.setInterval(sec);
  }

  sample(): void {
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const util = performance.eventLoopUtilization(elu, this.elu).utilization;
    // An interval in which the loop never turned has no sample: its delay is the whole interval.
    const d = takeLoopDelay();
    const whole = elapsedMs(this.since, now);
    if (d) runtimeEventLoop.Delay.write(d.p50Ms, d.p99Ms, d.maxMs, d.meanMs, util, whole, d.samples);
    else runtimeEventLoop.Delay.write(whole, whole, whole, whole, util, whole, 0);
    this.elu = elu;
    this.since = now;
  }

  stop(): void {
    this.ticking.stop();
  }
}

let delay: DelayMonitor | undefined;

// One delay monitor per thread (each has its own loop) and one watchdog for the main thread, shared by
// every session: the finest IntervalSec and the smallest StallMs asked for win.
const sessions = new ProviderSessions('Runtime.EventLoop', (s) => {
  if (isServiceThread) return;
  const wantDelay = s.size > 0 && runtimeEventLoop.Delay.enabled;
  const wantStalls = s.size > 0 && isMainThread && runtimeEventLoop.StallStart.enabled;
  if (wantDelay) {
    const sec = s.smallestNumber('IntervalSec', 1, 0.01, 3600);
    useLoopSampler('delay', RESOLUTION_MS);
    if (delay) delay.setInterval(sec);
    else delay = new DelayMonitor(sec);
  } else if (delay) {
    // The last session gets the partial interval before it goes.
    delay.sample();
    delay.stop();
    delay = undefined;
    useLoopSampler('delay', undefined);
  }
  setWatchdogDuty(WatchdogDuty.StallEvents, wantStalls ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
  // The main thread's sampler rests while its loop is idle, and the watchdog wakes it.
  if (isMainThread) setWatchdogDuty(WatchdogDuty.WakeRestingLoop, wantDelay && loopCanRest() ? Infinity : undefined);
});

/**
 * `Runtime.EventLoop`: this thread's event-loop delay and utilisation every `IntervalSec` (default 1),
 * and, for the main thread, stalls longer than `StallMs` (default 100) seen by a watchdog thread
 * while they last.
 */
export const runtimeEventLoop = defineProvider('Runtime.EventLoop', {
  keywords: { delay: 0x1n, stalls: 0x2n },
  events: {
    Delay: {
      id: 1,
      level: Level.Informational,
      keywords: ['delay'],
      fields: [['p50Ms', 'f64'], ['p99Ms', 'f64'], ['maxMs', 'f64'], ['meanMs', 'f64'], ['utilization', 'f64'], ['intervalMs', 'f64'], ['samples', 'u32']],
      doc: 'Event-loop delay percentiles (how late a 10 ms timer runs; periods the loop slept count as on time) and utilisation over the last interval.',
    },
    StallStart: {
      id: 2,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['blockedMs', 'f64']],
      doc: "Written by the watchdog thread while `thread`'s loop is still blocked: it has not turned for blockedMs (since its last beat, or since its thread woke from rest).",
    },
    StallEnd: {
      id: 3,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['durationMs', 'f64']],
      doc: 'The stalled loop turned again; durationMs is from the last moment it was known free (a beat, or its wake) to the turn that ended the stall.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
