import type { TraceReport } from '../trace-report.js';

/** A line over time, downsampled: at most two points (the bucket's minimum and maximum, at their own times) per time bucket. */
export interface TimeSeries {
  readonly name: string;
  /** Seconds since the trace origin. */
  readonly x: readonly number[];
  readonly y: readonly number[];
}

/**
 * Everything the HTML report draws, computed from the trace when the page is made (the page only
 * lays it out): every GC pause, stall and drop range as it is, the sampled figures downsampled.
 * Times are seconds since the trace origin, as the text report prints them. The page exposes it as
 * `window.tracepipeReport.data`.
 */
export interface ReportPageData {
  readonly title: string;
  readonly trace: {
    readonly file: string;
    readonly pid: number;
    readonly hostname: string;
    readonly nodeVersion: string;
    /** Wall clock at the trace origin (ISO 8601). */
    readonly startedAt: string;
    readonly events: number;
    /** First event to last. */
    readonly durationS: number;
  };
  readonly thresholds: { readonly infoMs: number; readonly warnMs: number };
  /** Every GC pause (Runtime.GC/GCPause), in time order, column by column. */
  readonly pauses: {
    readonly kinds: readonly string[];
    readonly startS: readonly number[];
    readonly durationMs: readonly number[];
    /** Index into `kinds`. */
    readonly kind: readonly number[];
    /** The thread whose heap was collected. */
    readonly thread: readonly number[];
    /** V8's used heap after the pause, MB; null when unknown. */
    readonly heapAfterMB: ReadonlyArray<number | null>;
  };
  /** Every event-loop stall (Runtime.EventLoop/StallEnd, paired with its StallStart), in time order. */
  readonly stalls: { readonly startS: readonly number[]; readonly durationMs: readonly number[]; readonly thread: readonly number[] };
  /** Stalls still going when the trace ended: from their start to the end of the trace. */
  readonly unfinishedStalls: { readonly startS: readonly number[]; readonly thread: readonly number[] };
  /** Every drop range (the first MAX_DROP_MARKERS), placed at the event that revealed it. */
  readonly drops: {
    readonly atS: readonly number[];
    readonly thread: readonly number[];
    readonly count: readonly number[];
    /** Ranges past the first MAX_DROP_MARKERS: counted, not placed. */
    readonly omitted: number;
  };
  /** Events per second per event type, over time buckets of `bucketS` seconds (the busiest types; the rest as "other"). */
  readonly rates: { readonly bucketS: number; readonly x: readonly number[]; readonly series: ReadonlyArray<{ readonly name: string; readonly perSecond: readonly number[] }> };
  /** Runtime.GCHeap/HeapStats used and total heap (MB), per thread. */
  readonly heap: readonly TimeSeries[];
  /** Runtime.GCHeap/HeapSpace used size (MB) of each heap space, per thread. */
  readonly spaces: readonly TimeSeries[];
  /** Runtime.EventLoop/Delay p50, p99 and max (ms), per thread. */
  readonly loopDelay: readonly TimeSeries[];
  /** Runtime.EventLoop/Delay utilisation (%), per thread. */
  readonly loopUtilization: readonly TimeSeries[];
  /** Declared counters (Runtime.Counters' among them): one group per provider and unit (bytes as MB), a line per counter. */
  readonly counters: ReadonlyArray<{ readonly provider: string; readonly unit: string; readonly series: readonly TimeSeries[] }>;
  /** CPU samples (Runtime.CpuSampler) as a call tree per sampled thread, for the flame graph. */
  readonly cpu: CpuFlameData;
  /** The text report's figures, and its text (tables) as `tracepipe report` prints it. */
  readonly report: TraceReport;
  readonly reportText: string;
}

/**
 * One sampled thread's call tree (src/analysis/call-tree.ts), times in ms. Nodes are in depth-first
 * order, each node's children by total time, the largest first; `parent` is an index into the same
 * arrays, -1 for the outermost frames. Nodes are frames on a path of calls: a function called along
 * two paths is two nodes, and `functions` has its figures over all of them (as the text report's).
 */
export interface CpuFlameThread {
  readonly thread: number;
  readonly samples: number;
  readonly sampledMs: number;
  /** Sampled time in no node: a stack the trace does not define, or a sample V8 gave no frame for. */
  readonly noStackMs: number;
  readonly noStackSamples: number;
  readonly nodes: {
    /** Index into CpuFlameData.functions. */
    readonly function: readonly number[];
    readonly parent: readonly number[];
    readonly selfMs: readonly number[];
    readonly totalMs: readonly number[];
    readonly selfSamples: readonly number[];
    readonly totalSamples: readonly number[];
  };
  /** Per function of the thread (functionTimes): self and total time over every path it was on. */
  readonly functions: { readonly function: readonly number[]; readonly selfMs: readonly number[]; readonly totalMs: readonly number[] };
  /** Nodes past the MAX_FLAME_NODES with the most total time: not sent, their time left blank under their parent. */
  readonly omittedNodes: number;
  readonly omittedMs: number;
}

export interface CpuFlameData {
  /** Functions as the text report names them ("name (file.js:12)"), and their script URLs. */
  readonly functions: readonly string[];
  readonly urls: readonly string[];
  /** Sampled threads, by thread id. */
  readonly threads: readonly CpuFlameThread[];
}
