import type { TraceEvent } from '../format/trace-event.js';
import { eventRole, type TypeRole } from '../schema/type-role.js';
import { percentile } from './percentile.js';

/** One span name's figures over a trace (durations in ms). */
export interface SpanStats {
  /** "Provider/Span". */
  span: string;
  count: number;
  errors: number;
  totalMs: number;
  /** Total minus the time its direct children (still running or not) covered, summed over spans. */
  selfMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface UnfinishedSpan {
  span: string;
  threadId: number;
  /** Since the trace origin. */
  startNs: number;
  /** From its begin to the trace's last event. */
  openMs: number;
}

export interface SpanReport {
  finished: number;
  errors: number;
  /** Begins with no end in the trace: the process died, a promise never settled, or the end was lost. */
  unfinished: number;
  /** Ends whose begin is not in the trace (it came before the session, or was lost). */
  endsWithoutBegin: number;
  /** Every span name, most total time first. */
  byName: SpanStats[];
  /** The span names with the most spans, total time and self time (up to 10 each). */
  topByCount: string[];
  topByTotal: string[];
  topBySelf: string[];
  /** The oldest unfinished spans (up to 10). */
  oldestUnfinished: UnfinishedSpan[];
}

interface OpenSpan {
  readonly span: string;
  readonly threadId: number;
  readonly startNs: number;
  readonly parentId: bigint;
  /** Intervals (start, end pairs) of children that ended while this span was open. */
  readonly covered: number[];
  /** Children still open: at this span's end they cover from their start to that end. */
  openChildren: Set<bigint> | undefined;
}

interface Accumulated {
  durationsMs: number[];
  errors: number;
  selfMs: number;
}

const TOP = 10;

/** Length of the union of `[a, b)` intervals (flat pairs), clipped to `[lo, hi)`. */
function coveredLength(pairs: number[], lo: number, hi: number): number {
  const spans: [number, number][] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const a = Math.max(lo, pairs[i]!);
    const b = Math.min(hi, pairs[i + 1]!);
    if (b > a) spans.push([a, b]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/**
 * Pairs span begins and ends (by span id, unique in a process) from events in timestamp order, and
 * keeps per span name the durations, errors and self time. Memory: the open spans and one number per
 * finished span.
 */
export class SpanTracker {
  private readonly roles = new Map<string, Map<string, TypeRole | null>>();
  private readonly open = new Map<bigint, OpenSpan>();
  private readonly byName = new Map<string, Accumulated>();
  private endsWithoutBegin = 0;
  private lastNs = 0;

  private roleOf(e: TraceEvent): TypeRole | null {
    let names = this.roles.get(e.provider);
    if (!names) this.roles.set(e.provider, (names = new Map()));
    let role = names.get(e.name);
    if (role === undefined) names.set(e.name, (role = eventRole(e) ?? null));
    return role;
  }

  add(e: TraceEvent): void {
    if (e.timestampNs > this.lastNs) this.lastNs = e.timestampNs;
    const role = this.roleOf(e);
    if (role === null || role.kind === 'counter') return;
    const f = e.fields;
    const id = f.spanId as bigint;
    if (role.kind === 'span-begin') {
      const parentId = f.parentSpanId as bigint;
      this.open.set(id, { span: `${e.provider}/${role.span}`, threadId: e.threadId, startNs: e.timestampNs, parentId, covered: [], openChildren: undefined });
      const parent = this.open.get(parentId);
      if (parent) (parent.openChildren ??= new Set()).add(id);
      return;
    }
    const s = this.open.get(id);
    if (!s) {
      this.endsWithoutBegin++;
      return;
    }
    this.open.delete(id);
    const endNs = e.timestampNs;
    const parent = this.open.get(s.parentId);
    if (parent) {
      parent.openChildren?.delete(id);
      parent.covered.push(s.startNs, endNs);
    }
    for (const child of s.openChildren ?? []) {
      const c = this.open.get(child);
      if (c) s.covered.push(c.startNs, endNs);
    }
    const durationNs = endNs - s.startNs;
    const a = this.byName.get(s.span) ?? { durationsMs: [], errors: 0, selfMs: 0 };
    this.byName.set(s.span, a);
    a.durationsMs.push(durationNs / 1e6);
    a.selfMs += (durationNs - coveredLength(s.covered, s.startNs, endNs)) / 1e6;
    if (f.error === true) a.errors++;
  }

  report(): SpanReport {
    const byName: SpanStats[] = [...this.byName].map(([span, a]) => {
      const sorted = a.durationsMs.sort((x, y) => x - y);
      return {
        span,
        count: sorted.length,
        errors: a.errors,
        totalMs: sorted.reduce((t, v) => t + v, 0),
        selfMs: a.selfMs,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
      };
    });
    const top = (by: (s: SpanStats) => number) => [...byName].sort((x, y) => by(y) - by(x)).slice(0, TOP).map((s) => s.span);
    const unfinished = [...this.open.values()].sort((x, y) => x.startNs - y.startNs);
    return {
      finished: byName.reduce((n, s) => n + s.count, 0),
      errors: byName.reduce((n, s) => n + s.errors, 0),
      unfinished: unfinished.length,
      endsWithoutBegin: this.endsWithoutBegin,
      byName: byName.sort((x, y) => y.totalMs - x.totalMs),
      topByCount: top((s) => s.count),
      topByTotal: top((s) => s.totalMs),
      topBySelf: top((s) => s.selfMs),
      oldestUnfinished: unfinished.slice(0, TOP).map((s) => ({ span: s.span, threadId: s.threadId, startNs: s.startNs, openMs: (this.lastNs - s.startNs) / 1e6 })),
    };
  }
}
