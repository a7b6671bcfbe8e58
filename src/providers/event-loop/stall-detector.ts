import { type Heartbeat, monotonicMs } from './heartbeat.js';

export interface StallListener {
  /** The watched loop has not beaten for `blockedMs` and still has not. */
  stallStart(blockedMs: number): Promise<void> | void;
  /** Still stalled: called about every `tickMs` while the stall lasts. */
  stalled(): Promise<void> | void;
  /** It beat again; `durationMs` is the gap between the heartbeats around the stall. */
  stallEnd(durationMs: number): Promise<void> | void;
}

/**
 * The watchdog's side of a heartbeat (runs on its own thread, so it sees a stall while it lasts): a
 * gap longer than stallMs plus one beat interval is a stall. Resolves when the heartbeat stops.
 */
export async function watchStalls(hb: Heartbeat, beatIntervalMs: (stallMs: number) => number, tickMs: number, on: StallListener): Promise<void> {
  while (!hb.stopped) {
    const stallMs = hb.stallMs;
    const limit = stallMs + beatIntervalMs(stallMs);
    const beat = hb.count;
    const last = hb.lastBeatMs;
    const since = monotonicMs() - last;
    if (since < limit) {
      await hb.waitFor('stop', 0, Math.max(1, limit - since));
      continue;
    }
    await on.stallStart(since);
    hb.waiting = true;
    for (;;) {
      await hb.waitFor('beat', beat, tickMs);
      if (hb.stopped || hb.count !== beat) break;
      await on.stalled();
    }
    hb.waiting = false;
    if (hb.count !== beat) await on.stallEnd(hb.lastBeatMs - last);
  }
}
