import type { Heartbeat } from './heartbeat.js';
import { LoopIdleProbe, LoopIdleRestClock, watchThisLoop } from './loop-idle-rest.js';
import { SchedStatProbe, SchedStatRestClock } from './schedstat-rest.js';

/**
 * What tells that the main thread has left its rest, and since when. Two routes: its loop's libuv idle
 * time, through the native addon (one call, no file read); without the addon, its Linux schedstat.
 * The thread and its watchdog use the same route (the main thread decides, and tells the watchdog).
 */

/** The resting thread's side: where it stands as it begins resting (the baseline the watchdog reads). */
export interface RestClock {
  /** Reads this thread and writes the reading to `hb` as its rest's baseline; false when it cannot be read. */
  markRest(hb: Heartbeat, sinceMs: number): boolean;
  close(): void;
}

/** The watchdog's side: reads the resting thread against the baseline it left. */
export interface RestProbe {
  /** How much earlier than the reckoned wake the thread may have woken (a stall is over-estimated by at most this). */
  readonly lagMs: number;
  /** Takes the baseline the thread left in `hb` for the readings after; returns when its rest began. */
  takeBaseline(hb: Heartbeat): number;
  /** Reads the thread: true while it has not run since the baseline (but for the end of the turn in which it was taken). */
  stillResting(): boolean;
  /** Reads the thread: when it left its rest, reckoned for a thread busy ever since (NaN: unreadable). */
  wokeAtMs(): number;
  /**
   * Sleeps while the thread rests: at least until the next poll, `pollMs` from now, or a new wake
   * count (not `seen`); maybe through several polls, while each finds it resting (counted in `hb`).
   */
  sleepWhileResting(hb: Heartbeat, seen: number, pollMs: number): void;
  close(): void;
}

/** Which route the main thread's rest is told by: its loop's idle time (the addon is there) or its schedstat. */
export type RestRoute = 'loop-idle' | 'schedstat';

/** On the main thread: the route its rest is told by (the addon's, with its loop put up for reading, when it loads). */
export function mainRestRoute(): RestRoute {
  return watchThisLoop() ? 'loop-idle' : 'schedstat';
}

/** The calling thread's clock on `route`; undefined when it cannot be read (it then never rests). */
export function openRestClock(route: RestRoute): RestClock | undefined {
  return route === 'loop-idle' ? LoopIdleRestClock.open() : SchedStatRestClock.open();
}

/** The watchdog's probe of the main thread on `route`, which `hb` tells the rest of; undefined when it cannot be read. */
export function openRestProbe(route: RestRoute, hb: Heartbeat): RestProbe | undefined {
  return route === 'loop-idle' ? LoopIdleProbe.open(hb) : SchedStatProbe.open();
}
