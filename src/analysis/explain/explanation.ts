import type { RequestSampling } from '../request-sampling.js';
/**
 * What `tracepipe explain` says about a trace (its `--json` output, and the section of `report`):
 * docs/EXPLAIN.md describes every field.
 */

/**
 * Where an item's time went, in order of precedence: each instant of the item's interval counts
 * once, for the first of these that covers it, so the shares add up to the interval exactly. A GC
 * pause or a stall stops the whole thread; a span waiting on its child waits whatever its thread does
 * meanwhile; CPU samples are the thread's, whoever's code they show; an earlier span of the same type
 * still running is only inferred from the overlap. docs/EXPLAIN.md gives the reasons in full.
 */
export const CAUSES = ['gc', 'stall', 'children', 'cpu', 'queued', 'unexplained'] as const;
export type Cause = (typeof CAUSES)[number];

export interface Share {
  readonly cause: Cause;
  /** Nanoseconds of the interval: integers, and the shares of an item add up to its duration. */
  readonly ns: number;
  readonly percent: number;
  /** What the share was computed from. */
  readonly from: string;
}

/** A function on CPU, from the samples of the item's thread (self time: the function was innermost). */
export interface FunctionShare {
  /** "name (file.js:12)". */
  readonly function: string;
  /** The function it was most often called from, when the samples show one. */
  readonly caller?: string;
  readonly selfMs: number;
  readonly selfSamples: number;
  /** Self time as a share of the item's interval. */
  readonly percent: number;
}

export interface GcSummary {
  /** Pauses of the item's thread that overlap its interval. */
  readonly pauses: number;
  /** Their time inside the interval. */
  readonly ms: number;
  /** Pauses by kind. */
  readonly byKind: Readonly<Record<string, number>>;
  readonly longestMs: number;
  readonly longestKind: string;
}

export interface StallSummary {
  /** Stalls of the item's thread's event loop that overlap its interval. */
  readonly stalls: number;
  /** Their time inside the interval. */
  readonly ms: number;
  /** The functions on CPU during those stalls, inside the interval. */
  readonly functions: readonly FunctionShare[];
}

export interface CpuSummary {
  /** Whether the item's thread was sampled around its interval. */
  readonly sampled: boolean;
  /** Why there is no CPU attribution, when there is none. */
  readonly note?: string;
  /** Samples whose time overlaps the interval, (idle) ones included (as cpuDuring counts them). */
  readonly samples: number;
  /** Time inside the interval covered by samples that were not (idle), before precedence. */
  readonly onCpuMs: number;
  /** The rest of the interval, before precedence: no sample, or an (idle) one (waiting: I/O, timers, locks). */
  readonly offCpuMs: number;
  /** The top functions by self time inside the interval. */
  readonly functions: readonly FunctionShare[];
}

/** Another span, as an item names it (a child, or an earlier span of the same type). */
export interface RelatedSpan {
  readonly span: string;
  readonly label: string;
  readonly spanId: string;
  readonly threadId: number;
  readonly startNs: number;
  readonly durationMs: number;
  /** Still open when the trace ended: its duration runs to the trace's last event. */
  readonly unfinished: boolean;
}

export interface ChildrenSummary {
  /** Direct children (spans whose parent is the item). */
  readonly count: number;
  /** The time inside the interval at least one of them was open. */
  readonly ms: number;
  /** The rest of the interval: the span's self time. */
  readonly selfMs: number;
  /** The children with the most time inside the interval (up to 3), the most first. */
  readonly top: readonly (RelatedSpan & { readonly insideMs: number })[];
}

export interface ConcurrencySummary {
  /** Other spans of the same type that overlapped the interval. */
  readonly running: number;
  /** Of those, the ones that began before it: what it may have queued behind. */
  readonly before: number;
  /** The time from its start during which one that began before it was still running. */
  readonly beforeMs: number;
  /** The earlier one that ran longest into it. */
  readonly longestBefore?: RelatedSpan;
}

export interface ExplainedItem {
  readonly kind: 'span' | 'stall';
  /** "Provider/Span" for a span; "Runtime.EventLoop/Stall" for a stall. */
  readonly span: string;
  /** A span's begin fields; "event loop blocked" for a stall. */
  readonly label: string;
  readonly spanId?: string;
  readonly parentSpanId?: string;
  readonly error?: boolean;
  readonly threadId: number;
  /** Since the trace origin. */
  readonly startNs: number;
  readonly endNs: number;
  readonly durationMs: number;
  /** A stall still going when the trace ended: it runs to the trace's last event. */
  readonly unfinished: boolean;
  /** Every cause that applies to the item, in precedence order; they add up to endNs − startNs. */
  readonly shares: readonly Share[];
  /** The largest share, in one line. */
  readonly verdict: { readonly cause: Cause; readonly text: string };
  readonly gc: GcSummary;
  readonly stalls?: StallSummary;
  readonly cpu: CpuSummary;
  readonly children?: ChildrenSummary;
  readonly concurrency?: ConcurrencySummary;
}

export interface ExplainOptions {
  /** The N slowest spans. */
  readonly top: number;
  /** Only spans of this type ("Provider/Span", or "Span" of any provider). */
  readonly span?: string;
  /** Only spans and stalls at least this long. */
  readonly minMs: number;
  /** CPU frames of source-mapped scripts at their original location (default true; `--no-source-maps`). */
  readonly sourceMaps?: boolean;
}

/** Counts of a sampled trace estimated for all requests: request trees' spans scaled by the sampling factor, other spans as counted. */
export interface SampledEstimates {
  readonly spanTypes: Readonly<Record<string, number>>;
  readonly matching: number;
}

export interface ExplainReport {
  readonly events: number;
  /** First event to last. */
  readonly wallNs: number;
  readonly complete: boolean;
  readonly error?: string;
  /** Events lost before they were written (sequence gaps): a span whose begin or end was lost is not explained. */
  readonly dropped: number;
  readonly options: { readonly top: number; readonly span: string | null; readonly minMs: number };
  readonly precedence: readonly Cause[];
  readonly sampler: {
    /** Whether the trace has any Runtime.CpuSampler sample. */
    readonly present: boolean;
    readonly sampledThreads: readonly number[];
    readonly note?: string;
    /** What source maps did to the functions' names and places (frames are shown at their original location where a map gives one). */
    readonly sourceMaps: readonly string[];
  };
  /** Span begins per span type ("Provider/Span"), every type in the trace, the most first. */
  readonly spanTypes: Readonly<Record<string, number>>;
  /**
   * Head sampling's counts, when Node.Channels sampled the requests (the spans here are of the kept
   * ones), and the counts above estimated for all requests (null when nothing was kept).
   */
  readonly requestSampling?: RequestSampling & { readonly estimated: SampledEstimates | null };
  readonly spans: {
    /** Finished spans of the asked type (every type without --span). */
    readonly matching: number;
    /** Of the asked type: begun and never ended in the trace, and ended with no begin in it. */
    readonly unfinished: number;
    readonly endsWithoutBegin: number;
    /** The slowest matching spans of at least --min-ms, slowest first. */
    readonly slowest: readonly ExplainedItem[];
  };
  readonly stalls: {
    readonly count: number;
    /** Every stall of at least --min-ms, in time order. */
    readonly items: readonly ExplainedItem[];
  };
}
