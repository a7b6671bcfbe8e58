import type { GcPause } from '../runtime-intervals.js';
import type { GcSummary } from './explanation.js';
import { IntervalUnion, measure } from './interval-set.js';

/** The GC pauses of an item's thread that overlap its interval: their time inside it, counts by kind, the longest. */
export class GcShare {
  private readonly cover = new IntervalUnion();
  private readonly byKind = new Map<string, number>();
  private longest: GcPause | undefined;

  add(p: GcPause): void {
    this.cover.add(p.startNs, p.startNs + p.durationNs);
    this.byKind.set(p.kind, (this.byKind.get(p.kind) ?? 0) + 1);
    if (!this.longest || p.durationNs > this.longest.durationNs) this.longest = p;
  }

  /** The pauses' time inside [fromNs, toNs), and the summary. */
  within(fromNs: number, toNs: number): { cover: number[]; summary: GcSummary } {
    const cover = this.cover.within(fromNs, toNs);
    return {
      cover,
      summary: {
        pauses: this.cover.size,
        ms: measure(cover) / 1e6,
        // Object.fromEntries defines each kind as an own property, '__proto__' included.
        byKind: Object.fromEntries([...this.byKind].sort((a, b) => b[1] - a[1])),
        longestMs: (this.longest?.durationNs ?? 0) / 1e6,
        longestKind: this.longest?.kind ?? '',
      },
    };
  }
}
