import type { Cause, Share } from './explanation.js';
import { claim, type Intervals, measure } from './interval-set.js';

/** A cause's cover of an item's interval: the intervals where it applies, and what they were computed from. */
export interface CauseCover {
  readonly cause: Exclude<Cause, 'unexplained'>;
  readonly cover: Intervals;
  readonly from: string;
}

/**
 * Splits [startNs, endNs) among causes given in precedence order: each takes what it covers of what
 * the causes before it left, and what none covers is 'unexplained'. The shares add up to the interval
 * exactly (integer nanoseconds).
 */
export function attribute(startNs: number, endNs: number, causes: readonly CauseCover[], unexplainedFrom: string): Share[] {
  const durationNs = endNs - startNs;
  const percent = (ns: number) => (durationNs > 0 ? (100 * ns) / durationNs : 0);
  let remaining: number[] = endNs > startNs ? [startNs, endNs] : [];
  const shares: Share[] = [];
  for (const c of causes) {
    const { taken, left } = claim(remaining, c.cover);
    shares.push({ cause: c.cause, ns: taken, percent: percent(taken), from: c.from });
    remaining = left;
  }
  const rest = measure(remaining);
  shares.push({ cause: 'unexplained', ns: rest, percent: percent(rest), from: unexplainedFrom });
  return shares;
}

/** The largest share (the first in precedence order among equals). */
export function largestShare(shares: readonly Share[]): Share {
  return shares.reduce((best, s) => (s.ns > best.ns ? s : best));
}
