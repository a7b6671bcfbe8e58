import type { BlockEvent, RawPayload } from '../../format/events-block.js';
import { StallPairs } from '../runtime-intervals.js';
import { EventRoles } from './event-roles.js';
import { RequestTrees } from '../request-sampling.js';
import type { ExplainOptions } from './explanation.js';
import type { RawFieldReader } from '../../format/raw-payloads.js';
import { finished, type FinishedSpan, type SpanBegin, SpanPairing } from './span-pairing.js';

/** A stall of a thread's event loop. */
export interface StallRecord {
  readonly threadId: number;
  readonly startNs: number;
  readonly endNs: number;
  /** Still going when the trace ended: it runs to the trace's last event. */
  readonly unfinished: boolean;
}

/** What the first pass found: what to explain, and what the second pass needs to know beforehand. */
export interface SlowItems {
  readonly events: number;
  readonly firstNs: number;
  readonly lastNs: number;
  readonly dropped: number;
  /** The slowest finished spans of the asked type and length, slowest first. */
  readonly spans: readonly FinishedSpan[];
  /** Finished spans of the asked type (every type without one). */
  readonly matching: number;
  /** Of them, those in request trees (RequestTrees): what head sampling keeps or leaves out. */
  readonly matchingInRequests: number;
  readonly unfinished: number;
  readonly endsWithoutBegin: number;
  /** Begins per span type, every type. */
  readonly spanTypes: ReadonlyMap<string, number>;
  /** Of them, those in request trees, per type that has any. */
  readonly spanTypesInRequests: ReadonlyMap<string, number>;
  /** Every stall, whatever its length (a span's share of stalls counts short ones too). */
  readonly stalls: readonly StallRecord[];
  /** Per sampled thread: its samples, and the longest interval a SamplerStarted gave it (0: none did). */
  readonly sampledThreads: ReadonlyMap<number, { samples: number; intervalNs: number }>;
}

/** Whether a span type ("Provider/Span") is the one asked for ("Provider/Span", or "Span" of any provider). */
export function spanMatches(span: string, asked: string | undefined): boolean {
  return asked === undefined || span === asked || (!asked.includes('/') && span.endsWith(`/${asked}`));
}

/**
 * The first pass: pairs spans and keeps the slowest `top` of those asked for (a sorted list of at most
 * `top`), every stall, and what the samples need, from a skim of the trace (ids read where they lie,
 * few events decoded). Only pairs and maxima are kept, so the order of events does not matter.
 * Memory: the open spans (bounded, SpanPairing), the kept spans, the stalls.
 */
export class SlowItemSelection {
  private readonly roles = new EventRoles();
  private readonly pairing = new SpanPairing();
  private readonly stallPairs = new StallPairs();
  private readonly stalls: StallRecord[] = [];
  private readonly slowest: FinishedSpan[] = [];
  private readonly spanTypes = new Map<string, number>();
  private readonly spanTypesInRequests = new Map<string, number>();
  private readonly requestTrees = new RequestTrees<number>();
  private readonly matchingType = new Map<string, boolean>();
  private readonly sampled = new Map<number, { samples: number; intervalNs: number }>();
  private readonly minNs: number;
  private events = 0;
  private firstNs = Infinity;
  private lastNs = -Infinity;
  private matching = 0;
  private matchingInRequests = 0;
  private dropped = 0;

  constructor(private readonly options: ExplainOptions) {
    this.minNs = options.minMs * 1e6;
  }

  /** An event of the skim, and where its payload lies (during the call only). */
  add(e: BlockEvent, raw: RawPayload): void {
    this.events++;
    const ts = e.timestampNs;
    if (ts < this.firstNs) this.firstNs = ts;
    if (ts > this.lastNs) this.lastNs = ts;
    const role = this.roles.of(e.type);
    if (role === null) return;
    switch (role.kind) {
      case 'span-begin': {
        const id = role.spanId(raw);
        const parentId = role.parentSpanId(raw);
        this.spanTypes.set(role.span, (this.spanTypes.get(role.span) ?? 0) + 1);
        if (this.requestTrees.begin(id, parentId, role.span)) this.spanTypesInRequests.set(role.span, (this.spanTypesInRequests.get(role.span) ?? 0) + 1);
        if (this.matches(role.span)) this.pairing.begin({ id, parentId, span: role.span, threadId: e.threadId, startNs: ts, label: undefined });
        break;
      }
      case 'span-end': {
        if (!this.matches(role.span)) break;
        const b = this.pairing.end(role.spanId(raw));
        if (b) this.finishedSpan(b, ts, raw, role.error);
        break;
      }
      case 'stall-start':
        this.stallPairs.start(this.roles.decoded(e, raw));
        break;
      case 'stall-end': {
        const s = this.stallPairs.end(this.roles.decoded(e, raw));
        this.stalls.push({ threadId: s.threadId, startNs: s.startNs, endNs: s.startNs + s.durationNs, unfinished: false });
        break;
      }
      case 'sample':
        this.sampledThread(role.thread(raw)).samples++;
        break;
      case 'sampler':
        if (e.name === 'SamplerStarted') {
          const f = this.roles.raw.decode(e.type, raw);
          const t = this.sampledThread(f.thread as number);
          t.intervalNs = Math.max(t.intervalNs, (f.intervalUs as number) * 1000);
        }
        break;
    }
  }

  /** Events lost before they were written. */
  addDropped(count: number): void {
    this.dropped += count;
  }

  finish(): SlowItems {
    const lastNs = this.events > 0 ? this.lastNs : 0;
    for (const u of this.stallPairs.unfinished()) this.stalls.push({ threadId: u.threadId, startNs: u.startNs, endNs: Math.max(u.startNs, lastNs), unfinished: true });
    this.stalls.sort((a, b) => a.startNs - b.startNs);
    return {
      events: this.events,
      firstNs: this.events > 0 ? this.firstNs : 0,
      lastNs,
      dropped: this.dropped,
      spans: this.slowest,
      matching: this.matching,
      matchingInRequests: this.matchingInRequests,
      unfinished: this.pairing.openCount + this.pairing.setAside,
      endsWithoutBegin: this.pairing.endsWithoutBegin,
      spanTypes: this.spanTypes,
      spanTypesInRequests: this.spanTypesInRequests,
      stalls: this.stalls,
      sampledThreads: this.sampled,
    };
  }

  private matches(span: string): boolean {
    let m = this.matchingType.get(span);
    if (m === undefined) this.matchingType.set(span, (m = spanMatches(span, this.options.span)));
    return m;
  }

  private sampledThread(thread: number): { samples: number; intervalNs: number } {
    let t = this.sampled.get(thread);
    if (!t) this.sampled.set(thread, (t = { samples: 0, intervalNs: 0 }));
    return t;
  }

  /** Keeps the span if it is among the slowest so far; only a kept one is made a FinishedSpan. */
  private finishedSpan(b: SpanBegin, endNs: number, raw: RawPayload, error: RawFieldReader): void {
    this.matching++;
    if (this.requestTrees.has(b.id)) this.matchingInRequests++;
    const d = Math.max(0, endNs - b.startNs);
    const list = this.slowest;
    const top = this.options.top;
    if (d < this.minNs || (list.length === top && d <= list[top - 1]!.endNs - list[top - 1]!.startNs)) return;
    // Kept slowest first; equal durations keep the order they finished in.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.endNs - list[mid]!.startNs >= d) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, finished(b, endNs, error(raw) !== 0));
    if (list.length > top) list.pop();
  }
}
