import { open } from 'node:fs/promises';
import type { BlockEvent, RawPayload } from '../../format/events-block.js';
import { TraceFormatError } from '../../format/format-error.js';
import type { RawPayloads } from '../../format/raw-payloads.js';
import type { EventRole } from './event-roles.js';
import type { ChildrenSummary, ConcurrencySummary, RelatedSpan } from './explanation.js';
import { IntervalUnion, measure } from './interval-set.js';
import { indexBy, type OverlapIndex } from './overlap-index.js';
import { finished, type FinishedSpan, type PayloadAt, type SpanBegin, SpanPairing, spanLabel } from './span-pairing.js';

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
  /** Named only once the pass is over: its label is read then (nameLongestBefore). */
  longestBefore: { span: FinishedSpan; readonly unfinished: boolean } | undefined;
}

function related(s: FinishedSpan, unfinished: boolean): RelatedSpan {
  return { span: s.span, label: typeof s.label === 'string' ? s.label : '', spanId: String(s.id), threadId: s.threadId, startNs: s.startNs, durationMs: (s.endNs - s.startNs) / 1e6, unfinished };
}

type BeginRole = Extract<EventRole, { kind: 'span-begin' }>;
type EndRole = Extract<EventRole, { kind: 'span-end' }>;

/**
 * The second pass's view of the other spans: each item's direct children (what its time waited on)
 * and the other spans of its type that overlapped it (what it may have queued behind), and the items'
 * own labels. Only spans that can matter are paired: children of an item, and spans of an item's type
 * that begin before the last such item ends; only those that may be named get their label (children,
 * decoded as they begin, and spans of an item's type begun before the last such item began, read
 * again from the file when named: a copy of every such payload cost more than the rest of the pass).
 * Spans still open when the trace ends run to its last event.
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
    let label: string | PayloadAt | undefined;
    if (child || this.items.has(id)) {
      label = spanLabel(this.raw.decode(e.type, raw));
      if (this.items.has(id)) this.labels.set(id, label);
    } else if (ts < latest!.startNs) label = { type: e.type, offset: raw.offset, length: raw.length };
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

  /** After finish(): reads the labels of the spans concurrencyOf names from `path`, where the pass read them. */
  async nameLongestBefore(path: string): Promise<void> {
    const named = [...this.concurrency.values()].flatMap((c) => (c.longestBefore && typeof c.longestBefore.span.label === 'object' ? [c.longestBefore] : []));
    if (named.length === 0) return;
    const fh = await open(path, 'r');
    try {
      for (const n of named) {
        const at = n.span.label as PayloadAt;
        const bytes = new Uint8Array(at.length);
        const { bytesRead } = await fh.read(bytes, 0, at.length, at.offset);
        if (bytesRead !== at.length) throw new TraceFormatError('io', `${path} changed while it was read: its bytes ${at.offset}-${at.offset + at.length} are gone`, at.offset);
        n.span = { ...n.span, label: spanLabel(this.raw.decodeCopy(at.type, bytes)) };
      }
    } finally {
      await fh.close();
    }
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
    // Most spans relate to nothing: their FinishedSpan is made only where one is kept.
    const startNs = b.startNs;
    const stopNs = Math.max(startNs, endNs);
    if (parent) {
      let c = this.children.get(parent);
      if (!c) this.children.set(parent, (c = { cover: new IntervalUnion(), count: 0, top: [] }));
      c.cover.add(startNs, stopNs);
      c.count++;
      // Ranked by the time they account for: inside the parent's interval (an async child may outlive it).
      const insideMs = Math.max(0, Math.min(stopNs, parent.endNs) - Math.max(startNs, parent.startNs)) / 1e6;
      const last = c.top[c.top.length - 1];
      if (c.top.length < TOP_CHILDREN || insideMs > last!.insideMs) {
        c.top.push({ ...related(finished(b, endNs, false), unfinished), insideMs });
        c.top.sort((x, y) => y.insideMs - x.insideMs).splice(TOP_CHILDREN);
      }
    }
    // Its parent and its children are not its peers.
    peers?.forEach(startNs, stopNs, (it) => {
      if (it.id === b.id || it.parentId === b.id || b.parentId === it.id) return;
      let c = this.concurrency.get(it);
      if (!c) this.concurrency.set(it, (c = { running: 0, before: 0, beforeEndNs: -Infinity, longestBefore: undefined }));
      c.running++;
      if (startNs >= it.startNs) return;
      c.before++;
      if (stopNs > c.beforeEndNs) {
        c.beforeEndNs = stopNs;
        c.longestBefore = { span: finished(b, endNs, false), unfinished };
      }
    });
  }
}
