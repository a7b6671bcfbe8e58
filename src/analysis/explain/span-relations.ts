import type { BlockEvent } from '../../format/events-block.js';
import type { ChildrenSummary, ConcurrencySummary, RelatedSpan } from './explanation.js';
import { IntervalUnion, measure } from './interval-set.js';
import { indexBy, type OverlapIndex } from './overlap-index.js';
import { type FinishedSpan, SpanPairing, spanLabel } from './span-pairing.js';

/** A span being explained. */
export interface SpanItem {
  readonly id: bigint;
  readonly parentId: bigint;
  readonly span: string;
  readonly startNs: number;
  readonly endNs: number;
}

/** Children listed per item at most. */
const TOP_CHILDREN = 3;

interface Children {
  readonly cover: IntervalUnion;
  count: number;
  readonly top: (RelatedSpan & { insideMs: number })[];
}

interface Concurrency {
  running: number;
  before: number;
  /** The latest end of those that began before the item. */
  beforeEndNs: number;
  longestBefore: RelatedSpan | undefined;
}

function related(s: FinishedSpan, unfinished: boolean): RelatedSpan {
  return { span: s.span, label: spanLabel(s.fields), spanId: String(s.id), threadId: s.threadId, startNs: s.startNs, durationMs: (s.endNs - s.startNs) / 1e6, unfinished };
}

/**
 * The second pass's view of the other spans: each item's direct children (what its time waited on)
 * and the other spans of its type that overlapped it (what it may have queued behind). Only spans
 * that can matter are paired: children of an item, and spans of an item's type that begin before the
 * last such item ends. Spans still open when the trace ends run to its last event.
 */
export class SpanRelations {
  private readonly items: ReadonlyMap<bigint, SpanItem>;
  private readonly byType: ReadonlyMap<string, OverlapIndex<SpanItem>>;
  private readonly reach = new Map<string, number>();
  private readonly pairing = new SpanPairing();
  private readonly children = new Map<SpanItem, Children>();
  private readonly concurrency = new Map<SpanItem, Concurrency>();

  constructor(items: readonly SpanItem[]) {
    this.items = new Map(items.map((it) => [it.id, it]));
    this.byType = indexBy(items, (it) => it.span);
    for (const it of items) this.reach.set(it.span, Math.max(this.reach.get(it.span) ?? -Infinity, it.endNs));
  }

  begin(e: BlockEvent, span: string): void {
    if (this.items.has(e.fields.parentSpanId as bigint) || e.timestampNs < (this.reach.get(span) ?? -Infinity)) this.pairing.begin(e, span);
  }

  end(e: BlockEvent): void {
    const s = this.pairing.end(e);
    if (s) this.relate(s, false);
  }

  /** The trace ended at `lastNs`: spans still open run to it. */
  finish(lastNs: number): void {
    for (const b of [...this.pairing.unfinished()]) this.relate({ ...b, endNs: Math.max(b.startNs, lastNs), error: false }, true);
  }

  childrenOf(it: SpanItem): { cover: number[]; summary: ChildrenSummary } {
    const c = this.children.get(it);
    const cover = c ? c.cover.within(it.startNs, it.endNs) : [];
    const ms = measure(cover) / 1e6;
    return { cover, summary: { count: c?.count ?? 0, ms, selfMs: (it.endNs - it.startNs) / 1e6 - ms, top: c?.top ?? [] } };
  }

  /** The item's concurrency, and the time from its start during which an earlier one was still running. */
  concurrencyOf(it: SpanItem): { cover: number[]; summary: ConcurrencySummary } {
    const c = this.concurrency.get(it);
    const until = Math.min(it.endNs, c?.beforeEndNs ?? -Infinity);
    const cover = until > it.startNs ? [it.startNs, until] : [];
    const summary: ConcurrencySummary = { running: c?.running ?? 0, before: c?.before ?? 0, beforeMs: measure(cover) / 1e6, ...(c?.longestBefore ? { longestBefore: c.longestBefore } : {}) };
    return { cover, summary };
  }

  private relate(s: FinishedSpan, unfinished: boolean): void {
    const parent = this.items.get(s.parentId);
    if (parent) {
      let c = this.children.get(parent);
      if (!c) this.children.set(parent, (c = { cover: new IntervalUnion(), count: 0, top: [] }));
      c.cover.add(s.startNs, s.endNs);
      c.count++;
      // Ranked by the time they account for: inside the parent's interval (an async child may outlive it).
      const insideMs = Math.max(0, Math.min(s.endNs, parent.endNs) - Math.max(s.startNs, parent.startNs)) / 1e6;
      const last = c.top[c.top.length - 1];
      if (c.top.length < TOP_CHILDREN || insideMs > last!.insideMs) {
        c.top.push({ ...related(s, unfinished), insideMs });
        c.top.sort((a, b) => b.insideMs - a.insideMs).splice(TOP_CHILDREN);
      }
    }
    // Its parent and its children are not its peers.
    this.byType.get(s.span)?.forEach(s.startNs, s.endNs, (it) => {
      if (it.id === s.id || it.parentId === s.id || s.parentId === it.id) return;
      let c = this.concurrency.get(it);
      if (!c) this.concurrency.set(it, (c = { running: 0, before: 0, beforeEndNs: -Infinity, longestBefore: undefined }));
      c.running++;
      if (s.startNs >= it.startNs) return;
      c.before++;
      if (s.endNs > c.beforeEndNs) {
        c.beforeEndNs = s.endNs;
        c.longestBefore = related(s, unfinished);
      }
    });
  }
}
