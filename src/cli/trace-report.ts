import { explainTrace } from '../analysis/explain/explain-trace.js';
import type { ExplainReport } from '../analysis/explain/explanation.js';
import type { TraceEvent } from '../format/trace-event.js';
import { TraceFormatError } from '../format/format-error.js';
import { type EventBatch, readTrace, type TraceSummary } from '../format/trace-reader.js';
import { type CpuProfile, CpuProfileBuilder } from '../analysis/cpu-profile.js';
import { StallPairs } from '../analysis/runtime-intervals.js';
import { msToNs } from '../schema/milliseconds.js';
import { type CounterStat, CounterSummary } from '../analysis/counter-summary.js';
import { percentile } from './percentile.js';
import { cpuSection, onCpu, type CpuSection, type OnCpu } from './report/cpu-section.js';
import { SpanTracker, type SpanReport } from './span-tracker.js';
import type { OtlpExportStats } from '../format/otlp-export-stats.js';

export interface ReportOptions {
  /** Pauses at least this long (ms) count as 'info'. */
  readonly infoMs: number;
  /** Pauses at least this long (ms) count as 'warn'. */
  readonly warnMs: number;
  /** CPU frames of source-mapped scripts at their original location (default true; `--no-source-maps`). */
  readonly sourceMaps?: boolean;
}

export interface Distribution {
  count: number;
  totalMs: number;
  /** Share of the trace's wall time (first to last event), in percent. */
  percentOfWall: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface GcPauseRecord {
  /** Since the trace origin. */
  timeNs: number;
  threadId: number;
  kind: string;
  durationMs: number;
}

export interface StallRecord {
  /** When the stall ended, since the trace origin. */
  timeNs: number;
  thread: number;
  durationMs: number;
  /** What the stalled thread ran during it, when the trace has CPU samples. */
  onCpu?: OnCpu;
}

export interface LoopDelay {
  threadId: number;
  intervals: number;
  /** Median over intervals of each interval's p50. */
  p50Ms: number;
  worstP99Ms: number;
  maxMs: number;
  meanUtilization: number;
}

export interface TraceReport {
  wallNs: number;
  events: number;
  complete: boolean;
  error?: string;
  gc: {
    all: Distribution;
    byKind: Record<string, Distribution>;
    byThread: Record<string, Distribution>;
    longest: GcPauseRecord[];
    thresholds: { infoMs: number; warnMs: number };
    /** Pauses at or above each threshold. */
    aboveInfo: number;
    aboveWarn: number;
    bySeverity: { debug: number; info: number; warn: number };
  };
  /** `unfinished` stalls were still going when the trace ended; `stillGoing` says since when (their start, since the trace origin). */
  stalls: { count: number; totalMs: number; longest: StallRecord[]; unfinished: number; stillGoing: { thread: number; sinceNs: number }[] };
  eventLoop: LoopDelay[];
  spans: SpanReport;
  /** Every counter in the trace (declared counters, Runtime.Counters). */
  counters: CounterStat[];
  drops: { dropped: number; ranges: number; byThread: Record<string, number> };
  /** The session's OTLP export, when it had one (format 1.2). */
  otlp?: OtlpExportStats;
  /** The top functions by CPU samples (Runtime.CpuSampler); absent when the trace has none. */
  cpu?: CpuSection;
  /** Where the slowest spans' and the stalls' time went (`tracepipe explain` with REPORT_EXPLAIN). */
  explain: ExplainReport;
}

/** What the report's explain section covers: the 10 slowest spans of every type, every stall. */
const REPORT_EXPLAIN = { top: 10, minMs: 0 };

const TOP = 10;

/** Milliseconds of whole nanoseconds, added up as nanoseconds: the total is as exact as each term. */
const totalMs = (values: readonly number[]): number => values.reduce((s, v) => s + msToNs(v), 0) / 1e6;

function distribution(values: number[], wallNs: number): Distribution {
  const sorted = values.slice().sort((a, b) => a - b);
  const total = totalMs(sorted);
  return {
    count: sorted.length,
    totalMs: total,
    percentOfWall: wallNs > 0 ? (100 * msToNs(total)) / wallNs : 0,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
  };
}

/** Items by key; a Map, since keys come from the trace ('constructor' or '__proto__' is a GC kind like any other there). */
function group<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}

/** Keeps the `n` largest by `by`, without holding more than n + 1. */
function keepLargest<T>(list: T[], item: T, by: (t: T) => number, n: number): void {
  list.push(item);
  list.sort((a, b) => by(b) - by(a));
  if (list.length > n) list.pop();
}

/**
 * What happened over a trace: GC pauses, event-loop stalls and delay, spans, lost events, CPU samples.
 * `observe` sees each batch of events (in timestamp order) after the report has: the HTML report's
 * charts are collected in the same pass.
 */
export async function buildReport(path: string, options: ReportOptions, observe?: (batch: EventBatch) => void): Promise<TraceReport> {
  return (await readReport(path, options, observe)).report;
}

/** buildReport, with the CPU profile it was made from (for views that draw the samples themselves). */
export async function readReport(path: string, options: ReportOptions, observe?: (batch: EventBatch) => void): Promise<{ report: TraceReport; profile: CpuProfile }> {
  const pauses: GcPauseRecord[] = [];
  const stalls: StallRecord[] = [];
  const longestStalls: StallRecord[] = [];
  const stallPairs = new StallPairs();
  const delays = new Map<number, { p50: number[]; p99: number; max: number; util: number; intervalMs: number }>();
  const spans = new SpanTracker();
  const cpu = new CpuProfileBuilder();
  const counters = new CounterSummary();
  let first = Infinity;
  let last = -Infinity;
  let events = 0;
  let error: string | undefined;

  const onEvent = (e: TraceEvent): void => {
    events++;
    if (e.timestampNs < first) first = e.timestampNs;
    if (e.timestampNs > last) last = e.timestampNs;
    spans.add(e);
    counters.add(e);
    if (cpu.add(e)) return;
    const f = e.fields as Record<string, unknown>;
    if (e.provider === 'Runtime.GC' && e.name === 'GCPause') {
      // The thread whose heap was collected (the watchdog writes the main thread's pauses during stalls).
      const threadId = f.thread === undefined ? e.threadId : Number(f.thread);
      pauses.push({ timeNs: e.timestampNs, threadId, kind: String(f.kind), durationMs: Number(f.durationNs) / 1e6 });
    } else if (e.provider === 'Runtime.EventLoop') {
      if (e.name === 'StallStart') stallPairs.start(e);
      else if (e.name === 'StallEnd') {
        const { threadId: thread, durationNs } = stallPairs.end(e);
        const s = { timeNs: e.timestampNs, thread, durationMs: durationNs / 1e6 };
        stalls.push(s);
        keepLargest(longestStalls, s, (x) => x.durationMs, TOP);
      } else if (e.name === 'Delay') {
        const d = delays.get(e.threadId) ?? { p50: [], p99: 0, max: 0, util: 0, intervalMs: 0 };
        delays.set(e.threadId, d);
        d.p50.push(Number(f.p50Ms));
        d.p99 = Math.max(d.p99, Number(f.p99Ms));
        d.max = Math.max(d.max, Number(f.maxMs));
        d.util += Number(f.utilization) * Number(f.intervalMs);
        d.intervalMs += Number(f.intervalMs);
      }
    }
  };

  try {
    for await (const batch of readTrace(path).batches()) {
      for (const e of batch.events) onEvent(e);
      observe?.(batch);
    }
  } catch (e) {
    // A damaged trace still yields its intact part: report on that and say where it broke.
    if (!(e instanceof TraceFormatError) || e.code === 'io' || e.code === 'not-a-trace' || e.code === 'unsupported-version') throw e;
    error = e.message;
  }
  const summary: TraceSummary = await readTrace(path).summary();
  // Its own two skims of the trace: a fraction of this pass's time (BENCHMARKS.md, explain).
  const explain = await explainTrace(path, { ...REPORT_EXPLAIN, sourceMaps: options.sourceMaps });
  const wallNs = events > 0 ? last - first : 0;
  const { infoMs, warnMs } = options;
  const durations = (list: GcPauseRecord[]) => list.map((p) => p.durationMs);
  // Object.fromEntries defines each key as an own property, '__proto__' included.
  const mapValues = <T, U>(m: Map<string, T>, fn: (t: T) => U) => Object.fromEntries([...m].map(([k, v]) => [k, fn(v)]));
  const longest: GcPauseRecord[] = [];
  for (const p of pauses) keepLargest(longest, p, (x) => x.durationMs, TOP);
  const aboveInfo = pauses.filter((p) => p.durationMs >= infoMs).length;
  const aboveWarn = pauses.filter((p) => p.durationMs >= warnMs).length;
  const dropsByThread: Record<string, number> = {};
  for (const [t, s] of Object.entries(summary.threads)) if (s.dropped > 0) dropsByThread[t] = s.dropped;
  const profile = cpu.finishForViews({ sourceMaps: options.sourceMaps });
  const spanReport = spans.report(explain.requestSampling?.factor ?? null);
  // What was on CPU during each stall listed (on the stalled thread) and each slowest span (on its own thread).
  const withOnCpu = <T>(item: T, thread: number, fromNs: number, toNs: number): T => {
    const c = onCpu(profile, thread, fromNs, toNs);
    return c ? { ...item, onCpu: c } : item;
  };
  const section = cpuSection(profile);
  const stillGoing = stallPairs.unfinished().map((x) => ({ thread: x.threadId, sinceNs: x.startNs }));

  const report: TraceReport = {
    wallNs,
    events,
    complete: summary.complete && error === undefined,
    ...(error ?? summary.error ? { error: error ?? summary.error!.message } : {}),
    gc: {
      all: distribution(durations(pauses), wallNs),
      byKind: mapValues(group(pauses, (p) => p.kind), (l) => distribution(durations(l), wallNs)),
      byThread: mapValues(group(pauses, (p) => String(p.threadId)), (l) => distribution(durations(l), wallNs)),
      longest,
      thresholds: { infoMs, warnMs },
      aboveInfo,
      aboveWarn,
      bySeverity: { debug: pauses.length - aboveInfo, info: aboveInfo - aboveWarn, warn: aboveWarn },
    },
    stalls: {
      count: stalls.length,
      totalMs: totalMs(stalls.map((x) => x.durationMs)),
      longest: longestStalls.map((x) => withOnCpu(x, x.thread, x.timeNs - msToNs(x.durationMs), x.timeNs)),
      unfinished: stillGoing.length,
      stillGoing,
    },
    eventLoop: [...delays].map(([threadId, d]) => ({
      threadId,
      intervals: d.p50.length,
      p50Ms: percentile(d.p50.sort((a, b) => a - b), 50),
      worstP99Ms: d.p99,
      maxMs: d.max,
      meanUtilization: d.intervalMs > 0 ? d.util / d.intervalMs : 0,
    })),
    spans: { ...spanReport, slowest: spanReport.slowest.map((x) => withOnCpu(x, x.threadId, x.startNs, x.startNs + msToNs(x.durationMs))) },
    counters: counters.stats(),
    drops: { dropped: summary.dropped, ranges: summary.drops.length, byThread: dropsByThread },
    ...(summary.otlp ? { otlp: summary.otlp } : {}),
    ...(section ? { cpu: section } : {}),
    explain,
  };
  return { report, profile };
}
