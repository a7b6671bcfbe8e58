import type { TraceEvent } from '../format/trace-event.js';
import { OldestEntry } from '../format/oldest-entry.js';
import { estimatedCount, RequestTrees } from '../analysis/request-sampling.js';
import { eventRole, type TypeRole } from '../schema/type-role.js';
import { percentile } from './percentile.js';
import type { OnCpu } from './report/cpu-section.js';

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
  /** Of `count`, the spans in request trees (RequestTrees): those head sampling keeps or leaves out. */
  inRequests: number;
  /** When requests were sampled: `count` estimated for all requests (estimatedCount). */
  estimatedCount?: number;
}

export interface UnfinishedSpan {
  span: string;
  threadId: number;
  /** Since the trace origin. */
  startNs: number;
  /** From its begin to the trace's last event. */
  openMs: number;
}

/** A finished span, among the slowest. */
export interface SlowSpan {
  span: string;
  threadId: number;
  /** Since the trace origin. */
  startNs: number;
  durationMs: number;
  error: boolean;
  /** What its thread ran meanwhile, when the trace has CPU samples (trace-report.ts adds it). */
  onCpu?: OnCpu;
}

export interface SpanReport {
  finished: number;
  /** When requests were sampled: `finished` estimated for all requests. */
  estimatedFinished?: number;
  errors: number;
  /** Begins with no end in the trace: the process died, a promise never settled, or the end was lost. */
  unfinished: number;
  /**
   * Of the unfinished, spans no longer tracked, so memory stays bounded: the oldest open ones while
   * more than 65,536 were open at once, and any begun again under the same id. The end of one that
   * came after all counts in endsWithoutBegin.
   */
  setAside: number;
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
  /** The longest finished spans of any name (up to 10), the longest first. */
  slowest: SlowSpan[];
}

/** Spans held open at most: past that the oldest is set aside, counted as unfinished. */
const MAX_OPEN_SPANS = 65_536;

/**
 * A span between its begin and its end. Its children still open are a list in begin order (so in
 * start order), linked through the children themselves: the earliest is the first, and one that
 * ends is unlinked in constant time, whatever the number of children.
 */
interface OpenSpan {
  readonly id: bigint;
  readonly span: string;
  readonly threadId: number;
  readonly startNs: number;
  readonly parentId: bigint;
  /** In a request tree (RequestTrees). */
  readonly inRequest: boolean;
  /** In its parent's list of open children. */
  linked: boolean;
  prev: OpenSpan | undefined;
  next: OpenSpan | undefined;
  firstChild: OpenSpan | undefined;
  lastChild: OpenSpan | undefined;
  /**
   * Self time, kept as it goes: `covered` is the time children covered before `frontier`. From the
   * frontier on, the earliest child still open (or set aside: it counts as running to this span's
   * end) covers everything, whatever else ends meanwhile; so when it ends, the time up to the next
   * earliest open child's start (or its own end) is covered.
   */
  covered: number;
  frontier: number;
  /** The earliest start of a child set aside. */
  setAsideFrom: number;
}

/** In whole nanoseconds, so that totals stay exact (a sum of milliseconds gathers rounding noise). */
interface Accumulated {
  durationsNs: number[];
  errors: number;
  selfNs: number;
  inRequests: number;
}

const TOP = 10;

/**
 * Pairs span begins and ends (by span id, unique in a process) from events in timestamp order, and
 * keeps per span name the durations, errors and self time. Memory: one number per finished span, and
 * at most MAX_OPEN_SPANS open spans of a few fields each (past that the oldest are set aside), however
 * many children a span has.
 */
export class SpanTracker {
  /** Per provider and event name: its role, and for a span begin its "Provider/Span" name, made once. */
  private readonly roles = new Map<string, Map<string, { role: TypeRole; span: string } | null>>();
  private readonly open = new Map<bigint, OpenSpan>();
  private readonly oldestOpen = new OldestEntry(this.open);
  private readonly byName = new Map<string, Accumulated>();
  private readonly requestTrees = new RequestTrees<bigint>();
  /** The first TOP spans set aside: the oldest among them. */
  private readonly oldestSetAside: UnfinishedSpan[] = [];
  /** The TOP longest finished spans, the longest first. */
  private readonly slowest: SlowSpan[] = [];
  private setAside = 0;
  private endsWithoutBegin = 0;
  private lastNs = 0;

  /** `maxOpen`: MAX_OPEN_SPANS; smaller in tests, to reach the limit often. */
  constructor(private readonly maxOpen = MAX_OPEN_SPANS) {}

  private roleOf(e: TraceEvent): { role: TypeRole; span: string } | null {
    let names = this.roles.get(e.provider);
    if (!names) this.roles.set(e.provider, (names = new Map()));
    let known = names.get(e.name);
    if (known === undefined) {
      const role = eventRole(e);
      known = role && role.kind !== 'counter' ? { role, span: `${e.provider}/${role.span}` } : null;
      names.set(e.name, known);
    }
    return known;
  }

  add(e: TraceEvent): void {
    if (e.timestampNs > this.lastNs) this.lastNs = e.timestampNs;
    const known = this.roleOf(e);
    if (known === null) return;
    const f = e.fields;
    const id = f.spanId as bigint;
    if (known.role.kind === 'span-begin') this.begin(id, f.parentSpanId as bigint, known.span, e);
    else this.end(id, e.timestampNs, f.error === true);
  }

  private begin(id: bigint, parentId: bigint, span: string, e: TraceEvent): void {
    const startNs = e.timestampNs;
    const s: OpenSpan = {
      id, span, threadId: e.threadId, startNs, parentId, inRequest: this.requestTrees.begin(id, parentId, span), linked: false, prev: undefined, next: undefined,
      firstChild: undefined, lastChild: undefined, covered: 0, frontier: startNs, setAsideFrom: Infinity,
    };
    const reused = this.open.get(id);
    if (reused) this.forget(reused);
    const parent = this.open.get(parentId);
    if (parent) {
      // The first open child of a span with none: the time since the last one ended was not covered.
      if (!parent.firstChild && parent.setAsideFrom === Infinity && startNs > parent.frontier) parent.frontier = startNs;
      s.linked = true;
      s.prev = parent.lastChild;
      if (parent.lastChild) parent.lastChild.next = s;
      else parent.firstChild = s;
      parent.lastChild = s;
    }
    this.open.set(id, s);
    if (this.open.size > this.maxOpen) this.forget(this.oldestOpen.take()![1]);
  }

  private end(id: bigint, endNs: number, error: boolean): void {
    const s = this.open.get(id);
    if (!s) {
      this.endsWithoutBegin++;
      return;
    }
    this.open.delete(id);
    const parent = s.linked ? this.open.get(s.parentId) : undefined;
    if (parent) {
      const wasFirst = parent.firstChild === s;
      unlink(parent, s);
      if (wasFirst) {
        const next = Math.min(parent.firstChild?.startNs ?? Infinity, parent.setAsideFrom);
        const to = next === Infinity ? endNs : next;
        if (to > parent.frontier) {
          parent.covered += to - parent.frontier;
          parent.frontier = to;
        }
      }
    }
    // Children still open, or set aside, cover from the frontier to this end.
    if ((s.firstChild || s.setAsideFrom !== Infinity) && endNs > s.frontier) s.covered += endNs - s.frontier;
    detachChildren(s);
    const durationNs = endNs - s.startNs;
    let a = this.byName.get(s.span);
    if (!a) this.byName.set(s.span, (a = { durationsNs: [], errors: 0, selfNs: 0, inRequests: 0 }));
    a.durationsNs.push(durationNs);
    a.selfNs += durationNs - Math.min(s.covered, Math.max(0, durationNs));
    if (error) a.errors++;
    if (s.inRequest) a.inRequests++;
    this.keepIfSlow(s, durationNs, error);
  }

  private keepIfSlow(s: OpenSpan, durationNs: number, error: boolean): void {
    const list = this.slowest;
    const durationMs = durationNs / 1e6;
    if (list.length === TOP && durationMs <= list[TOP - 1]!.durationMs) return;
    // Among equals, the one that ended first stays ahead.
    let at = list.length;
    while (at > 0 && list[at - 1]!.durationMs < durationMs) at--;
    list.splice(at, 0, { span: s.span, threadId: s.threadId, startNs: s.startNs, durationMs, error });
    if (list.length > TOP) list.pop();
  }

  /** Stops tracking `s` (set aside): it counts as unfinished, and as a child running to its parent's end. */
  private forget(s: OpenSpan): void {
    this.open.delete(s.id);
    this.setAside++;
    if (this.oldestSetAside.length < TOP) this.oldestSetAside.push({ span: s.span, threadId: s.threadId, startNs: s.startNs, openMs: 0 });
    const parent = s.linked ? this.open.get(s.parentId) : undefined;
    if (parent) {
      unlink(parent, s);
      parent.setAsideFrom = Math.min(parent.setAsideFrom, s.startNs);
    }
    detachChildren(s);
  }

  /** `samplingFactor`: requests were sampled, and request trees' counts times this estimate all requests' (RequestSampling.factor). */
  report(samplingFactor: number | null = null): SpanReport {
    const byName: SpanStats[] = [...this.byName].map(([span, a]) => {
      const sorted = a.durationsNs.sort((x, y) => x - y);
      return {
        span,
        count: sorted.length,
        errors: a.errors,
        totalMs: sorted.reduce((t, v) => t + v, 0) / 1e6,
        selfMs: a.selfNs / 1e6,
        p50Ms: percentile(sorted, 50) / 1e6,
        p99Ms: percentile(sorted, 99) / 1e6,
        maxMs: sorted.length ? sorted[sorted.length - 1]! / 1e6 : 0,
        inRequests: a.inRequests,
        ...(samplingFactor === null ? {} : { estimatedCount: estimatedCount(sorted.length, a.inRequests, samplingFactor) }),
      };
    });
    const top = (by: (s: SpanStats) => number) => [...byName].sort((x, y) => by(y) - by(x)).slice(0, TOP).map((s) => s.span);
    // Open spans are in begin order: the oldest are among the first.
    const oldest: UnfinishedSpan[] = [...this.oldestSetAside];
    let n = 0;
    for (const s of this.open.values()) {
      if (n++ === TOP) break;
      oldest.push({ span: s.span, threadId: s.threadId, startNs: s.startNs, openMs: 0 });
    }
    oldest.sort((x, y) => x.startNs - y.startNs).splice(TOP);
    return {
      finished: byName.reduce((n, s) => n + s.count, 0),
      ...(samplingFactor === null ? {} : { estimatedFinished: byName.reduce((n, s) => n + s.estimatedCount!, 0) }),
      errors: byName.reduce((n, s) => n + s.errors, 0),
      unfinished: this.open.size + this.setAside,
      setAside: this.setAside,
      endsWithoutBegin: this.endsWithoutBegin,
      byName: byName.sort((x, y) => y.totalMs - x.totalMs),
      topByCount: top((s) => s.count),
      topByTotal: top((s) => s.totalMs),
      topBySelf: top((s) => s.selfMs),
      oldestUnfinished: oldest.map((u) => ({ ...u, openMs: (this.lastNs - u.startNs) / 1e6 })),
      slowest: this.slowest.map((x) => ({ ...x })),
    };
  }
}

/** `s` ended or was set aside: its children still open are no longer in its list (nor hold each other). */
function detachChildren(s: OpenSpan): void {
  for (let c = s.firstChild; c; ) {
    const next = c.next;
    c.linked = false;
    c.prev = c.next = undefined;
    c = next;
  }
  s.firstChild = s.lastChild = undefined;
}

/** Takes `child` out of `parent`'s list of open children. */
function unlink(parent: OpenSpan, child: OpenSpan): void {
  if (child.prev) child.prev.next = child.next;
  else parent.firstChild = child.next;
  if (child.next) child.next.prev = child.prev;
  else parent.lastChild = child.prev;
  child.prev = child.next = undefined;
  child.linked = false;
}
