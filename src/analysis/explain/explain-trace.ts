import type { BlockEvent, RawPayload } from '../../format/events-block.js';
import { readTrace } from '../../format/trace-reader.js';
import { type CpuProfile, CpuProfileBuilder } from '../cpu-profile.js';
import { estimatedCount, RequestSamplingTally } from '../request-sampling.js';
import { gcPauseOf } from '../runtime-intervals.js';
import { sourceMapNotes } from '../source-maps.js';
import { attribute, type CauseCover, largestShare } from './attribution.js';
import { cpuShare, functionsWithin, idleFrames, NO_SAMPLER_NOTE, SampleFilter } from './cpu-share.js';
import { EventRoles } from './event-roles.js';
import { CAUSES, type ExplainedItem, type ExplainOptions, type ExplainReport, type SampledEstimates, type StallSummary } from './explanation.js';
import { GcShare } from './gc-share.js';
import { IntervalUnion, measure } from './interval-set.js';
import { indexBy, type OverlapIndex } from './overlap-index.js';
import type { FinishedSpan } from './span-pairing.js';
import { type SpanItem, SpanRelations } from './span-relations.js';
import { SlowItemSelection, type SlowItems, type StallRecord } from './slow-items.js';
import { verdictText } from './verdict.js';

/** An item of the second pass: a slow span or a stall, on its thread. */
type Item = (({ readonly kind: 'span' } & FinishedSpan) | ({ readonly kind: 'stall' } & StallRecord)) & { readonly gc: GcShare };

/** A skim of the whole trace (readTrace().skim): the error where it stopped early, if it did. */
async function skimPass(path: string, onEvent: (e: BlockEvent, raw: RawPayload) => void): Promise<{ error?: string; dropped: number }> {
  const r = await readTrace(path).skim(onEvent);
  return { dropped: r.dropped, ...(r.error ? { error: r.error.message } : {}) };
}

/**
 * `tracepipe explain`: the first pass picks what to explain (SlowItemSelection), the second works out
 * where each one's time went (explainItems). Both skim the trace in stream order (every step is
 * indifferent to the order of events) and decode only the few events they need whole. Memory: what
 * the two passes keep (the open spans, the chosen items and every stall, and what overlaps the items:
 * their GC pauses, children and samples), never the trace.
 */
export async function explainTrace(path: string, options: ExplainOptions): Promise<ExplainReport> {
  const selection = new SlowItemSelection(options);
  const sampling = new RequestSamplingTally();
  const first = await skimPass(path, (e, raw) => {
    selection.add(e, raw);
    sampling.skimmed(e, raw);
  });
  selection.addDropped(first.dropped);
  const found = selection.finish();
  const report = await explainItems(path, found, options, first.error);
  const requestSampling = sampling.result();
  return requestSampling ? { ...report, requestSampling: { ...requestSampling, estimated: sampledEstimates(report, found, requestSampling.factor) } } : report;
}

/** The report's span counts estimated for all requests, from the kept ones. */
function sampledEstimates(report: ExplainReport, found: SlowItems, factor: number | null): SampledEstimates | null {
  if (factor === null) return null;
  const inRequests = (type: string) => found.spanTypesInRequests.get(type) ?? 0;
  return {
    spanTypes: Object.fromEntries(Object.entries(report.spanTypes).map(([type, n]) => [type, estimatedCount(n, inRequests(type), factor)])),
    matching: estimatedCount(report.spans.matching, found.matchingInRequests, factor),
  };
}

/** The second pass over `path`: GC pauses, samples and spans that overlap the items found in the first. */
async function explainItems(path: string, found: SlowItems, options: ExplainOptions, firstError: string | undefined): Promise<ExplainReport> {
  const minNs = options.minMs * 1e6;
  const items: Item[] = [
    ...found.spans.map((s) => ({ ...s, kind: 'span' as const, gc: new GcShare() })),
    ...found.stalls.filter((s) => s.endNs - s.startNs >= minNs).map((s) => ({ ...s, kind: 'stall' as const, gc: new GcShare() })),
  ];
  const spanItems = items.filter((it): it is Item & { kind: 'span' } & FinishedSpan => it.kind === 'span');
  const byThread = indexBy(items, (it) => it.threadId);
  const filter = new SampleFilter(items, found.sampledThreads);
  const builder = new CpuProfileBuilder();
  const roles = new EventRoles();
  const relations = new SpanRelations(spanItems, roles.raw);
  const second = await skimPass(path, (e, raw) => {
    const role = roles.of(e.type);
    if (role === null) return;
    switch (role.kind) {
      case 'gc-pause': {
        const p = gcPauseOf(roles.decoded(e, raw));
        byThread.get(p.threadId)?.forEach(p.startNs, p.startNs + p.durationNs, (it) => it.gc.add(p));
        break;
      }
      case 'sample':
        if (filter.keeps(role.thread(raw), e.timestampNs)) builder.add(roles.decoded(e, raw));
        break;
      case 'sampler':
        builder.add(roles.decoded(e, raw));
        break;
      case 'span-begin':
        relations.begin(e, raw, role);
        break;
      case 'span-end':
        relations.end(e, raw, role);
        break;
    }
  });
  relations.finish(found.lastNs);
  await relations.nameLongestBefore(path);
  // As every view of the samples shows them: source-mapped frames at their original location.
  const profile = builder.finishForViews({ sourceMaps: options.sourceMaps });
  const samplerPresent = found.sampledThreads.size > 0;
  const explain = new ItemExplainer(profile, samplerPresent, indexBy(found.stalls, (s) => s.threadId), relations);
  const err = firstError ?? second.error;
  return {
    events: found.events,
    wallNs: found.lastNs - found.firstNs,
    complete: err === undefined,
    ...(err !== undefined ? { error: err } : {}),
    dropped: found.dropped,
    options: { top: options.top, span: options.span ?? null, minMs: options.minMs },
    precedence: CAUSES,
    sampler: {
      present: samplerPresent,
      sampledThreads: [...found.sampledThreads.keys()].sort((a, b) => a - b),
      ...(samplerPresent ? {} : { note: NO_SAMPLER_NOTE }),
      sourceMaps: profile.sourceMaps ? sourceMapNotes(profile.sourceMaps) : [],
    },
    spanTypes: Object.fromEntries([...found.spanTypes].sort((a, b) => b[1] - a[1])),
    spans: {
      matching: found.matching,
      unfinished: found.unfinished,
      endsWithoutBegin: found.endsWithoutBegin,
      slowest: spanItems.map((it) => explain.item(it)),
    },
    stalls: { count: found.stalls.length, items: items.filter((it) => it.kind === 'stall').map((it) => explain.item(it)) },
  };
}

/** Puts together each item's covers, shares and verdict once the second pass is done. */
class ItemExplainer {
  private readonly idle: Set<number>;

  constructor(
    private readonly profile: CpuProfile,
    private readonly samplerPresent: boolean,
    private readonly stalls: ReadonlyMap<number, OverlapIndex<StallRecord>>,
    private readonly relations: SpanRelations,
  ) {
    this.idle = idleFrames(profile);
  }

  item(it: Item): ExplainedItem {
    const { startNs: a, endNs: b, threadId: t } = it;
    const gc = it.gc.within(a, b);
    const cpu = cpuShare(this.profile, this.idle, this.samplerPresent, t, a, b);
    const causes: CauseCover[] = [{ cause: 'gc', cover: gc.cover, from: `Runtime.GC/GCPause of thread ${t}` }];
    const cpuCause: CauseCover = {
      cause: 'cpu',
      cover: cpu.cover,
      from: cpu.summary.sampled ? `Runtime.CpuSampler/Sample of thread ${t} other than (idle), each standing for the time to the next, less the above` : `no samples: ${cpu.summary.note}`,
    };
    const unexplainedFrom = !cpu.summary.sampled
      ? `the rest: on CPU or waiting, unknown without samples (${cpu.summary.note})`
      : it.kind === 'stall'
        ? 'the rest: blocked with no CPU sample'
        : 'the rest: no child or earlier span open and no CPU sample (I/O, timers, locks)';
    if (it.kind === 'stall') {
      causes.push(cpuCause);
      const shares = attribute(a, b, causes, unexplainedFrom);
      const base = { kind: 'stall' as const, span: 'Runtime.EventLoop/Stall', label: 'event loop blocked', threadId: t, startNs: a, endNs: b, durationMs: (b - a) / 1e6, unfinished: it.unfinished, shares, gc: gc.summary, cpu: cpu.summary };
      return { ...base, verdict: this.verdict(base) };
    }
    const stall = this.stallShare(t, a, b);
    const item: SpanItem = it;
    const children = this.relations.childrenOf(item);
    const concurrency = this.relations.concurrencyOf(item);
    causes.push(
      { cause: 'stall', cover: stall.cover, from: `Runtime.EventLoop stalls of thread ${t}, less the above` },
      { cause: 'children', cover: children.cover, from: 'direct child spans open, less the above' },
      cpuCause,
      { cause: 'queued', cover: concurrency.cover, from: `earlier ${it.span} spans still running, less the above` },
    );
    const shares = attribute(a, b, causes, unexplainedFrom);
    const base = {
      kind: 'span' as const,
      span: it.span,
      label: this.relations.labelOf(it),
      spanId: String(it.id),
      parentSpanId: String(it.parentId),
      error: it.error,
      threadId: t,
      startNs: a,
      endNs: b,
      durationMs: (b - a) / 1e6,
      unfinished: false,
      shares,
      gc: gc.summary,
      stalls: stall.summary,
      cpu: cpu.summary,
      children: children.summary,
      concurrency: concurrency.summary,
    };
    return { ...base, verdict: this.verdict(base) };
  }

  private verdict(item: Omit<ExplainedItem, 'verdict'>): ExplainedItem['verdict'] {
    const share = largestShare(item.shares);
    return { cause: share.cause, text: verdictText(item, share) };
  }

  /** The stalls of the thread's loop inside [a, b), and the functions on CPU during them. */
  private stallShare(t: number, a: number, b: number): { cover: number[]; summary: StallSummary } {
    const union = new IntervalUnion();
    this.stalls.get(t)?.forEach(a, b, (s) => union.add(s.startNs, s.endNs));
    const cover = union.within(a, b);
    const samples = this.profile.threads.get(t);
    const functions = samples ? functionsWithin(this.profile, this.idle, samples, cover, b - a) : [];
    return { cover, summary: { stalls: union.size, ms: measure(cover) / 1e6, functions } };
  }
}
