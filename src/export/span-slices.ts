import type { BlockEvent } from '../format/events-block.js';
import { SPAN_BEGIN_SUFFIX } from '../schema/type-role.js';
import { OldestEntry } from '../format/oldest-entry.js';
import type { Slice, SliceArg } from './runtime-view.js';
import { type LaneSpan, ThreadLanes } from './span-lanes.js';

/**
 * Spans held open at most; past that the oldest is drawn as unfinished at the latest time seen on its
 * thread (its end, if it comes, is then an instant), so memory stays bounded whatever the trace.
 */
const MAX_OPEN_SPANS = 65_536;
/** Drawn spans remembered for arrows to children drawn later, and drawn children waiting for their parent. */
const MAX_REMEMBERED = 65_536;

/** Where a drawn span lies: its thread, its lane there (0: the thread's own track) and its interval. */
export interface SpanPlace {
  readonly threadId: number;
  readonly lane: number;
  readonly startNs: number;
  readonly endNs: number;
}

/** A span as a slice: on lane `lane` of its thread, always with a duration (an unfinished one runs to the trace's end). */
export interface SpanSlice extends Slice {
  readonly lane: number;
  readonly durationNs: number;
}

/**
 * An arrow between a span and its parent where the child is not drawn inside the parent (another
 * thread or lane, or it outlived the parent). `id` is the child's span id; `fromThis` says the slice
 * being drawn is the parent (the child was drawn before), else it is the child.
 */
export interface SpanFlow {
  readonly id: bigint;
  readonly other: SpanPlace;
  readonly fromThis: boolean;
}

interface OpenSpan extends LaneSpan {
  readonly id: bigint;
  readonly parentId: bigint;
  readonly begin: BlockEvent;
}

function inside(child: SpanPlace, parent: SpanPlace): boolean {
  return child.threadId === parent.threadId && child.lane === parent.lane && child.startNs >= parent.startNs && child.endNs <= parent.endNs;
}

/**
 * Pairs `<Span>.Begin` and `<Span>.End` events (by span id, unique in a process) into slices on the
 * begin's thread, for the timeline formats, in stream order and bounded memory. A slice is drawn when
 * its span ends (or the trace does), so its duration is known and nothing is held but the open spans.
 *
 * Timeline tools nest the slices of one track like a call stack, but spans that follow `await` overlap
 * without nesting (two requests on one thread). So each thread has lanes: lane 0 is the thread's own
 * track and lanes 1, 2, … are tracks beside it. A span is meant for its parent's lane (children nest
 * in their parent) or, with no open parent on its thread, for the lowest lane no open span holds; when
 * it ends it takes that lane unless a slice drawn there since it began straddles its start, else the
 * lowest lane no open span holds where none does (ThreadLanes). Each lane's slices then nest properly
 * whatever the order of the ends. A child drawn outside its parent (another thread or lane, or it
 * outlived the parent) gets a flow arrow from the parent, when both are drawn and the parent is
 * remembered. Each step costs O(log lanes) amortized whatever the mix of open and ended spans (a span
 * moved off its lane looks at up to 32 others).
 */
export class SpanSlices {
  private readonly open = new Map<bigint, OpenSpan>();
  private readonly oldestOpen = new OldestEntry(this.open);
  private readonly threads = new Map<number, ThreadLanes>();
  private readonly drawn = new Map<bigint, SpanPlace>();
  private readonly oldestDrawn = new OldestEntry(this.drawn);
  private readonly awaitingParent = new Map<bigint, { id: bigint; place: SpanPlace }[]>();
  private readonly oldestAwaiting = new OldestEntry(this.awaitingParent);
  private awaiting = 0;
  /** Counts begins and draws: which of two happened first, whatever their timestamps. */
  private clock = 0;

  constructor(
    private readonly draw: (slice: SpanSlice, flows: readonly SpanFlow[]) => void,
    /** Spans held open at most (MAX_OPEN_SPANS; smaller in tests, to reach the limit often). */
    private readonly maxOpen = MAX_OPEN_SPANS,
  ) {}

  begin(e: BlockEvent): void {
    const id = e.fields.spanId as bigint;
    const lanes = this.lanesOf(e.threadId);
    if (e.timestampNs > lanes.latestNs) lanes.latestNs = e.timestampNs;
    const reused = this.open.get(id);
    if (reused) this.close(reused, e.timestampNs, undefined);
    if (this.open.size >= this.maxOpen) {
      const oldest = this.oldestOpen.take()![1];
      this.close(oldest, this.lanesOf(oldest.begin.threadId).latestNs, undefined);
    }
    const parentId = e.fields.parentSpanId as bigint;
    const parent = this.open.get(parentId);
    const lane = parent && parent.begin.threadId === e.threadId ? parent.lane : lanes.freeLane();
    const s: OpenSpan = { id, parentId, begin: e, lane, startNs: e.timestampNs, since: this.clock++, mayTakeLane: true };
    lanes.opened(s);
    this.open.set(id, s);
  }

  /** False when the span's begin is not known (before the session, lost, or drawn already): the caller shows the end as it is. */
  end(e: BlockEvent): boolean {
    const s = this.open.get(e.fields.spanId as bigint);
    if (!s) return false;
    const lanes = this.lanesOf(s.begin.threadId);
    if (e.timestampNs > lanes.latestNs) lanes.latestNs = e.timestampNs;
    this.close(s, e.timestampNs, e);
    return true;
  }

  /** The trace ended at `endNs`: every span still open is drawn up to there, innermost (latest begun) first, marked unfinished. */
  finish(endNs: number): void {
    const open = [...this.open.values()].sort((a, b) => b.since - a.since);
    for (const s of open) this.close(s, endNs, undefined);
  }

  /** A drawn child whose parent is not drawn yet (open, or not read yet); the oldest go past MAX_REMEMBERED. */
  private awaitParent(parentId: bigint, id: bigint, place: SpanPlace): void {
    let list = this.awaitingParent.get(parentId);
    if (!list) this.awaitingParent.set(parentId, (list = []));
    list.push({ id, place });
    if (++this.awaiting > MAX_REMEMBERED) this.awaiting -= this.oldestAwaiting.take()![1].length;
  }

  private takeAwaiting(parentId: bigint): readonly { id: bigint; place: SpanPlace }[] {
    const list = this.awaitingParent.get(parentId);
    if (!list) return [];
    this.awaitingParent.delete(parentId);
    this.awaiting -= list.length;
    return list;
  }

  private lanesOf(threadId: number): ThreadLanes {
    let t = this.threads.get(threadId);
    if (!t) this.threads.set(threadId, (t = new ThreadLanes()));
    return t;
  }

  /** Draws `s` ending at `endNs`, with its end event's fields, or marked unfinished without one. */
  private close(s: OpenSpan, endNs: number, end: BlockEvent | undefined): void {
    const b = s.begin;
    this.open.delete(s.id);
    const lane = this.lanesOf(b.threadId).closed(s, this.clock++);
    const place: SpanPlace = { threadId: b.threadId, lane, startNs: b.timestampNs, endNs: Math.max(endNs, b.timestampNs) };

    const args: SliceArg[] = b.type.layout.fields.map((f) => [f.name, f.type, b.fields[f.name]!] as const);
    if (end) {
      const taken = new Set(args.map(([name]) => name));
      for (const f of end.type.layout.fields) {
        if (f.name !== 'spanId') args.push([taken.has(f.name) ? `end.${f.name}` : f.name, f.type, end.fields[f.name]!]);
      }
    } else args.push(['unfinished', 'bool', true]);

    const flows: SpanFlow[] = [];
    const parent = this.drawn.get(s.parentId);
    if (parent) {
      if (!inside(place, parent)) flows.push({ id: s.id, other: parent, fromThis: false });
    } else if (s.parentId !== 0n) this.awaitParent(s.parentId, s.id, place);
    for (const child of this.takeAwaiting(s.id)) if (!inside(child.place, place)) flows.push({ id: child.id, other: child.place, fromThis: true });
    this.drawn.set(s.id, place);
    if (this.drawn.size > MAX_REMEMBERED) this.oldestDrawn.take();

    const name = b.name.endsWith(SPAN_BEGIN_SUFFIX) ? b.name.slice(0, -SPAN_BEGIN_SUFFIX.length) : b.name;
    this.draw({ threadId: b.threadId, lane, startNs: place.startNs, durationNs: place.endNs - place.startNs, name, category: b.provider, args }, flows);
  }
}
