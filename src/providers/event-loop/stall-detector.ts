import { type Heartbeat, monotonicMs, STALL_DUTIES } from './heartbeat.js';
import { elapsedMs } from '../../schema/milliseconds.js';
import type { RestProbe } from './rest-clock.js';

export interface StallListener {
  /** The watched loop has not turned for `blockedMs` and still has not. */
  stallStart(blockedMs: number): void;
  /** Still stalled: called about every `tickMs` while the stall lasts. */
  stalled(): void;
  /** It turned again; `durationMs` is from the last moment it was known free to the beat that ended it. */
  stallEnd(durationMs: number): void;
}

/** How often the watchdog reads a resting thread while it watches for stalls (StallMs, when smaller). */
export const REST_POLL_MS = 100;
/**
 * How often it reads one when it is only there to wake the resting sampler (Runtime.Counters, or
 * Delay without stall events, where the native addon's turn meter is missing): a wake seen later costs no figure, since the sampler takes a loop that
 * has been busy since it woke as late from then (LoopSampler.answer), but each reading is a wake-up
 * of this thread, the larger part of an idle process's cost.
 */
export const WAKE_POLL_MS = 250;
/**
 * The watchdog's side (runs on its own thread, so it sees a stall while it lasts). A loop that beats
 * (its sampler runs while it has work) is stalled once its last beat is older than StallMs plus one
 * beat interval. A loop whose sampler rests is asleep as long as its thread has not left its rest
 * (read every REST_POLL_MS, or WAKE_POLL_MS, by `probe`: its loop's idle time, or its schedstat); once it has, the
 * watchdog rings the doorbell and reckons when it woke from the same reading. With no answer StallMs
 * (plus the probe's lag) after that, the loop is stalled; the answer ends it.
 * Resolves when the heartbeat stops. `yieldToLoop` lets this thread's own event loop run between
 * waits, which are synchronous: nothing else runs here meanwhile.
 */
export async function watchStalls(
  hb: Heartbeat,
  probe: RestProbe | undefined,
  beatIntervalMs: (stallMs: number) => number,
  tickMs: number,
  on: StallListener,
  yieldToLoop: () => Promise<void>,
): Promise<void> {
  const lagMs = probe?.lagMs ?? 0;
  /**
   * When the resting thread woke, from a reading against its rest's baseline (taken at `sinceMs`):
   * exact for a thread busy ever since. Read again once the stall ends: until then a schedstat has not
   * counted the slice under way.
   */
  const wokeAt = (sinceMs: number): number => {
    const t = monotonicMs();
    const woke = probe ? probe.wokeAtMs() : NaN;
    return Number.isNaN(woke) ? t : Math.min(t, Math.max(sinceMs, woke));
  };
  /** A ring not yet answered: the beat count when it rang, when the thread woke, and its rest's start. */
  let rang: { beat: number; wokeMs: number; sinceMs: number } | undefined;
  let settings = -1;
  while (!hb.stopped) {
    const seen = hb.wakeCount;
    // This thread's own loop runs only when there is news: a new setting (sessions changed), or
    // events written (below). Turning it on every poll would cost more than the poll.
    if (seen !== settings) {
      settings = seen;
      await yieldToLoop();
    }
    const stallMs = hb.stallMs;
    const watching = (hb.duties & STALL_DUTIES) !== 0;
    const pollMs = watching ? Math.min(REST_POLL_MS, stallMs) : WAKE_POLL_MS;
    if (rang && hb.count !== rang.beat) {
      // Answered. A loop that did not turn for StallMs after it woke stalled, though this thread
      // could not look in time (a busy machine): reported now, with its length.
      const blockedMs = elapsedMs(Math.min(rang.wokeMs, wokeAt(rang.sinceMs)), hb.lastBeatMs);
      if (watching && blockedMs >= stallMs + lagMs) {
        await yieldToLoop();
        on.stallStart(blockedMs);
        on.stallEnd(blockedMs);
      }
      hb.stallFromMs = NaN;
      rang = undefined;
      // The thread is finishing that turn: read it again a poll later, not while it runs.
      if (hb.resting) {
        hb.sleep(seen, pollMs);
        continue;
      }
    }
    if (!rang && hb.resting) {
      const sinceMs = probe ? probe.takeBaseline(hb) : hb.restSinceMs;
      hb.countPoll();
      if (probe?.stillResting()) {
        probe.sleepWhileResting(hb, seen, pollMs);
        continue;
      }
      // It left its rest: since when, the reading says.
      rang = { beat: hb.count, wokeMs: wokeAt(sinceMs), sinceMs };
      hb.ring(rang.wokeMs);
    }
    if (!watching) {
      // Only here to wake a resting loop: nothing to time.
      hb.sleep(seen, pollMs);
      continue;
    }
    const beat = hb.count;
    // The loop may have turned up to a beat interval after its last beat, or the lag after its reckoned wake.
    const last = rang ? rang.wokeMs : hb.lastBeatMs;
    const limit = stallMs + (rang ? lagMs : beatIntervalMs(stallMs));
    const now = monotonicMs();
    const since = now - last;
    if (since < limit) {
      hb.sleep(seen, limit - since);
      continue;
    }
    // Sessions may have changed since the loop last turned: hear of them before writing. A watchdog
    // stopped meanwhile (its sessions ended; another may watch the loop now) writes nothing: it would
    // write a stall from a heartbeat nobody beats any more into the sessions that came since.
    await yieldToLoop();
    if (hb.stopped) break;
    hb.stallFromMs = last;
    on.stallStart(elapsedMs(last, now));
    hb.listening = true;
    for (;;) {
      const s = hb.wakeCount;
      if (hb.stopped || hb.count !== beat) break;
      hb.sleep(s, tickMs);
      if (hb.stopped || hb.count !== beat) break;
      on.stalled();
      await yieldToLoop();
    }
    hb.listening = false;
    hb.stallFromMs = NaN;
    if (hb.count !== beat) on.stallEnd(elapsedMs(rang ? Math.min(last, wokeAt(rang.sinceMs)) : last, hb.lastBeatMs));
    rang = undefined;
    // Its buffers' idle seal runs on this loop: let it turn once the events are written.
    await yieldToLoop();
  }
}
