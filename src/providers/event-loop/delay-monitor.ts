import { requireBuiltin, isMainThread as onMainThread } from '../../schema/this-thread.js';
import type { EventLoopUtilization } from 'node:perf_hooks';
import { elapsedMs } from '../../schema/milliseconds.js';
import { everyInterval, type Ticking } from '../interval-ticker.js';
import { WatchdogDuty } from './heartbeat.js';
import { loopCanRest, restsWithoutWatchdog, takeLoopDelay, useLoopSampler } from './loop-sampler.js';
import { setWatchdogDuty } from './stall-watchdog.js';
const { performance } = requireBuiltin('node:perf_hooks') as typeof import('node:perf_hooks');
const isMainThread = onMainThread();

/** The loop sampler's period for delay: what perf_hooks' monitorEventLoopDelay defaults to. */
const RESOLUTION_MS = 10;

/** This thread's event loop over one interval. */
export interface LoopInterval {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
  /** Share of the interval the loop was busy (0..1), from eventLoopUtilization(). */
  readonly utilization: number;
  readonly intervalMs: number;
  /** The sampler's readings; 0 when the loop never turned (its delay is then the whole interval). */
  readonly samples: number;
}

export type LoopIntervalUser = 'event-loop' | 'counters';

interface Use {
  readonly sec: number;
  readonly listener: (i: LoopInterval) => void;
}

const uses = new Map<LoopIntervalUser, Use>();
let ticking: Ticking | undefined;
let elu: EventLoopUtilization = performance.eventLoopUtilization();
let since = performance.now();

/**
 * Closes the interval: the delay the loop sampler saw since the last one and the utilisation, once
 * for every user (taking the sampler's delay twice would split its readings between them).
 */
function sample(): void {
  const now = performance.now();
  const nextElu = performance.eventLoopUtilization();
  const utilization = performance.eventLoopUtilization(nextElu, elu).utilization;
  const d = takeLoopDelay();
  const whole = elapsedMs(since, now);
  const interval: LoopInterval = d ? { ...d, utilization, intervalMs: whole } : { p50Ms: whole, p99Ms: whole, maxMs: whole, meanMs: whole, utilization, intervalMs: whole, samples: 0 };
  elu = nextElu;
  since = now;
  for (const u of uses.values()) u.listener(interval);
}

/**
 * Hands `listener` this thread's event-loop figures every `sec` seconds (undefined: stop). One timer
 * and one loop sampler serve every user, at the finest interval any of them asks for. A user that
 * leaves gets the partial interval first, and so do the others (their interval ends there too).
 */
export function useLoopIntervals(user: LoopIntervalUser, sec: number | undefined, listener?: (i: LoopInterval) => void): void {
  if (sec === undefined) {
    if (!uses.has(user)) return;
    sample();
    uses.delete(user);
  } else uses.set(user, { sec, listener: listener! });
  if (uses.size === 0) {
    ticking?.stop();
    ticking = undefined;
    useLoopSampler('delay', undefined);
  } else {
    const finest = Math.min(...[...uses.values()].map((u) => u.sec));
    if (ticking) ticking.setInterval(finest);
    else {
      useLoopSampler('delay', RESOLUTION_MS);
      elu = performance.eventLoopUtilization();
      since = performance.now();
      ticking = everyInterval(finest, sample);
    }
  }
  // The main thread's sampler rests while its loop is idle: its turn meter wakes it, or without the
  // addon a watchdog that reads its schedstat.
  if (isMainThread) setWatchdogDuty(WatchdogDuty.WakeRestingLoop, uses.size > 0 && !restsWithoutWatchdog() && loopCanRest() ? Infinity : undefined);
}
