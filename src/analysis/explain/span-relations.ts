import type { BlockEvent, RawPayload } from '../../format/events-block.js';
import type { RawPayloads } from '../../format/raw-payloads.js';
import type { EventRole } from './event-roles.js';
import type { ChildrenSummary, ConcurrencySummary, RelatedSpan } from './explanation.js';
import { IntervalUnion, measure } from './interval-set.js';
import { indexBy, type OverlapIndex } from './overlap-index.js';
import { finished, type FinishedSpan, type SpanBegin, SpanPairing, spanLabel } from './span-pairing.js';

/** A span being explained. */
export interface SpanItem {
  readonly id: number;
  readonly parentId: number;
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
  /** Named only once the pass is over: its label is decoded then. */
  longestBefore: { readonly span: FinishedSpan; readonly unfinished: boolean } | undefined;
}

function related(s: FinishedSpan, unfinished: boolean): RelatedSpan {
  return { span: s.span, label: s.label?.() ?? '', spanId: String(s.id), threadId: s.threadId, startNs: s.startNs, durationMs: (s.endNs - s.startNs) / 1e6, unfinished };
}

type BeginRole = Extract<EventRole, { kind: 'span-begin' }>;
type EndRole = Extract<EventRole, { kind: 'span-end' }>;

/**
 * The second pass's view of the other spans: each item's direct children (what its time waited on)
 * and the other spans of its type that overlapped it (what it may have queued behind), and the items'
 * own labels. Only spans that can matter are paired: children of an item, and spans of an item's type
 * that begin before the last such item ends; only those that may be named get their label (children,
 * decoded as they begin, and spans of an item's type begun before the last such item began, from a
 * copy of their payload when named). Spans still open when the trace ends run to its last event.
 */
export class SpanRelations {
  private readonly items: ReadonlyMap<number, SpanItem>;
  private readonly labels = new Map<number, string>();
  private readonly byType: ReadonlyMap<string, OverlapIndex<SpanItem>>;
  /** Per type: the latest start and the latest end of its items. */
  private readonly latest = new Map<string, { startNs: number; endNs: number }>();
  private readonly pairing = new SpanPairing();
  private readonly children = new Map<SpanItem, Children>();
  private readonly concurrency = new Map<SpanItem, Concurrency>();

  constructor(
    items: readonly SpanItem[],
    private readonly raw: RawPayloads,
  ) {
    this.items = new Map(items.map((it) => [it.id, it]));
    this.byType = indexBy(items, (it) => it.span);
    for (const it of items) {
      const l = this.latest.get(it.span);
      this.latest.set(it.span, { startNs: Math.max(l?.startNs ?? -Infinity, it.startNs), endNs: Math.max(l?.endNs ?? -Infinity, it.endNs) });
    }
  }

  begin(e: BlockEvent, raw: RawPayload, role: BeginRole): void {
    const id = role.spanId(raw);
    const parentId = role.parentSpanId(raw);
    const ts = e.timestampNs;
    const latest = this.latest.get(role.span);
    const child = this.items.has(parentId);
    if (!child && !this.items.has(id) && !(latest && ts < latest.endNs)) return;
    let label: (() => string) | undefined;
    if (child || this.items.has(id)) {
      const text = spanLabel(this.raw.decode(e.type, raw));
      if (this.items.has(id)) this.labels.set(id, text);
      label = () => text;
    } else if (ts < latest!.startNs) {
      // The skim's event and payload are rewritten for the next event: keep a copy, and the type.
      const { type } = e;
      const bytes = this.raw.copy(raw);
      label = () => spanLabel(this.raw.decodeCopy(type, bytes));
    }
    this.pairing.begin({ id, parentId, span: role.span, threadId: e.threadId, startNs: ts, label });
  }

  end(e: BlockEvent, raw: RawPayload, role: EndRole): void {
    const b = this.pairing.end(role.spanId(raw));
    if (b) this.relate(b, e.timestampNs, false);
  }

  /** The trace ended at `lastNs`: spans still open run to it. */
  finish(lastNs: number): void {
    for (const b of [...this.pairing.unfinished()]) this.relate(b, lastNs, true);
  }

  /** An item's label, from its begin's fields ('' when its begin was not read again). */
  labelOf(it: SpanItem): string {
    return this.labels.get(it.id) ?? '';
  }

  childrenOf(it: SpanItem): { cover: number[]; summary: ChildrenSummary } {
    const c = this.children.get(it);
    const cover = c ? c.cover.within(it.startNs, it.endNs) : [];
    const ns = measure(cover);
    return { cover, summary: { count: c?.count ?? 0, ms: ns / 1e6, selfMs: (it.endNs - it.startNs - ns) / 1e6, top: c?.top ?? [] } };
  }

  /** The item's concurrency, and the time from its start during which an earlier one was still running. */
  concurrencyOf(it: SpanItem): { cover: number[]; summary: ConcurrencySummary } {
    const c = this.concurrency.get(it);
    const until = Math.min(it.endNs, c?.beforeEndNs ?? -Infinity);
    const cover = until > it.startNs ? [it.startNs, until] : [];
    const first = c?.longestBefore;
    const summary: ConcurrencySummary = { running: c?.running ?? 0, before: c?.before ?? 0, beforeMs: measure(cover) / 1e6, ...(first ? { longestBefore: related(first.span, first.unfinished) } : {}) };
    return { cover, summary };
  }

  /** Counts a span that ended (or the trace did) where it matters: among its parent's children, and as a peer of the items of its type it overlapped. */
  private relate(b: SpanBegin, endNs: number, unfinished: boolean): void {
    const parent = this.items.get(b.parentId);
    const peers = this.byType.get(b.span);
    if (!parent && !peers) return;
    const s = finished(b, endNs, false);
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
        c.top.sort((x, y) => y.insideMs - x.insideMs).splice(TOP_CHILDREN);
      }
    }
    // Its parent and its children are not its peers.
    peers?.forEach(s.startNs, s.endNs, (it) => {
      if (it.id === s.id || it.parentId === s.id || s.parentId === it.id) return;
      let c = this.concurrency.get(it);
      if (!c) this.concurrency.set(it, (c = { running: 0, before: 0, beforeEndNs: -Infinity, longestBefore: undefined }));
      c.running++;
      if (s.startNs >= it.startNs) return;
      c.before++;
      if (s.endNs > c.beforeEndNs) {
        c.beforeEndNs = s.endNs;
        c.longestBefore = { span: s, unfinished };
      }
    });
  }
}
