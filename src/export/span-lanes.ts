import { LaneIndex } from './lane-index.js';

/** What the lanes know of an open span. */
export interface LaneSpan {
  /** The lane it is meant for: its parent's when the parent is open on the same thread, else a free one. */
  readonly lane: number;
  readonly startNs: number;
  /** When it began on the caller's clock, which counts begins and draws (`now` in closed()). */
  readonly since: number;
  /** Still free to take its lane: no slice drawn there since it began straddles its start. */
  mayTakeLane: boolean;
}

/**
 * Free lanes looked at for a span that cannot take its own, before it takes one idle since it began,
 * and the outermost slices remembered per lane for that look: enough to place spans where placing
 * each against every slice would (on traces of requests whose children outlive them, some never
 * ending: the same lanes, and all but 0.2 % of the arrows), in bounded time and memory.
 */
const LANES_TRIED = 32;
const OUTERMOST_KEPT = 16;

/**
 * One thread's span lanes (see SpanSlices). A lane is free when no open span is meant for it. The
 * lane index holds, per lane, +Infinity while it is not free, else when a slice was last drawn on it
 * (-1: never), so the lowest free lane, or the lowest idle since a time, is found in O(log lanes).
 */
export class ThreadLanes {
  /** The latest time of a span event here: where a span set aside past the limit is drawn to end. */
  latestNs = 0;
  private readonly index = new LaneIndex();
  private readonly meantFor: number[] = [];
  private readonly lastDrawn: number[] = [];
  /** Per lane, the open spans meant for it that may still take it, in begin order. */
  private readonly contenders: LaneSpan[][] = [];
  /**
   * Per lane, its latest outermost slices (none inside another: both their starts and their draws
   * increase) as start, draw pairs, and the draw of the last one forgotten past OUTERMOST_KEPT.
   */
  private readonly outermost: number[][] = [];
  private readonly forgotten: number[] = [];

  /** The lowest free lane. */
  freeLane(): number {
    return this.index.lowestBelow(Infinity);
  }

  opened(s: LaneSpan): void {
    const lane = s.lane;
    if ((this.meantFor[lane] = (this.meantFor[lane] ?? 0) + 1) === 1) this.index.set(lane, Infinity);
    (this.contenders[lane] ??= []).push(s);
  }

  /**
   * `s` ends, drawn `now`: the lane it is drawn on. Its own lane, unless a slice drawn there since it
   * began straddles its start; then the lowest free lane where none does (so it does not appear
   * nested in an open span), among the first LANES_TRIED free lanes drawn on since it began, else the
   * lowest free lane idle since then.
   */
  closed(s: LaneSpan, now: number): number {
    const own = s.lane;
    if (--this.meantFor[own]! === 0) this.index.set(own, this.lastDrawn[own] ?? -1);
    let lane = own;
    if (s.mayTakeLane) {
      // The spans meant for this lane that began after s, or at the same time, would straddle the end
      // of its slice: they may no longer take the lane. s is in the list, so each is taken out once.
      const list = this.contenders[own]!;
      for (let o = list.pop()!; o !== s; o = list.pop()!) o.mayTakeLane = false;
      while (list.length > 0 && list[list.length - 1]!.startNs >= s.startNs) list.pop()!.mayTakeLane = false;
    } else lane = this.otherLane(s);
    this.drawOn(lane, s.startNs, now);
    return lane;
  }

  private otherLane(s: LaneSpan): number {
    let lane = this.index.lowestBelow(Infinity);
    for (let tried = 0; tried < LANES_TRIED; tried++) {
      if ((this.lastDrawn[lane] ?? -1) < s.since || !this.straddles(lane, s)) return lane;
      lane = this.index.lowestBelow(Infinity, lane + 1);
    }
    return this.index.lowestBelow(s.since);
  }

  /** Whether a slice drawn on `lane` since `s` began starts no later than `s` (or might, having been forgotten). */
  private straddles(lane: number, s: LaneSpan): boolean {
    if ((this.forgotten[lane] ?? -1) > s.since) return true;
    const pairs = this.outermost[lane] ?? [];
    let first = -1;
    for (let i = pairs.length - 2; i >= 0 && pairs[i + 1]! > s.since; i -= 2) first = i;
    // The earliest-starting slice drawn since s began is the first outermost one drawn since.
    return first >= 0 && pairs[first]! <= s.startNs;
  }

  private drawOn(lane: number, startNs: number, now: number): void {
    this.lastDrawn[lane] = now;
    if ((this.meantFor[lane] ?? 0) === 0) this.index.set(lane, now);
    const pairs = (this.outermost[lane] ??= []);
    // Slices drawn before that start no earlier lie inside this one.
    while (pairs.length > 0 && pairs[pairs.length - 2]! >= startNs) pairs.length -= 2;
    pairs.push(startNs, now);
    if (pairs.length > 2 * OUTERMOST_KEPT) this.forgotten[lane] = pairs.splice(0, 2)[1]!;
  }
}
