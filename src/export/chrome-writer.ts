import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { PlacedDrop } from '../format/trace-reader.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { FLUSH_BYTES } from './export-output.js';
import type { ExportEnd } from './export-writer.js';
import { fieldsWriter, type FieldsWriter, JsonWriter } from './json-text.js';
import { type Slice } from './runtime-view.js';
import { counterFields, counterGroup, type TimelineRole } from '../format/timeline-role.js';
import { processLabel } from '../format/stream-header.js';
import type { SpanFlow, SpanPlace, SpanSlice } from './span-slices.js';
import { MAX_MICROSECONDS_TEXT, putBytes, putMicroseconds, utf8 } from './text-writer.js';
import { TimelineWriter, type TypeView } from './timeline-writer.js';

interface ChromeView extends TypeView {
  /** `,\n{"name":"Provider/Event","cat":"Provider","ph":"i","ts":` */
  readonly instantHead: Uint8Array;
  /** Its fields, then the `}}` that closes `args` and the event. */
  readonly args: FieldsWriter;
  readonly counters: readonly FieldLayout[];
}

/** A span lane's tid: its thread's tid plus this times the lane (thread tids are pid + a small thread id). */
const LANE_TID_STRIDE = 1 << 20;

/**
 * Chrome's Trace Event Format (`{"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}`), which
 * the Perfetto UI and chrome://tracing load: `X` slices for GC pauses, stalls and spans on their
 * thread (spans that overlap without nesting on "spans N" threads beside it), `s`/`f` flow arrows to
 * children drawn elsewhere, `C` counters, `i` instants (thread scope, the default) with every field in
 * `args`, `M` process and thread names. Times are microseconds with the nanoseconds as three exact
 * decimals.
 */
export class ChromeWriter extends TimelineWriter<ChromeView> {
  private readonly w: JsonWriter;
  /** `,"pid":P,"tid":T,"args":{` per thread and span lane seen, by tid. */
  private readonly tidArgs = new Map<number, Uint8Array>();
  /** The span lanes each thread has named so far (0, its own, included). */
  private readonly lanes = new Map<number, Set<number>>();
  /** The thread of the last event on a thread's own track, and its `,"pid":P,"tid":T,"args":{`. */
  private lastThread = -1;
  private lastThreadArgs: Uint8Array | undefined;

  constructor(path: string) {
    const w = new JsonWriter(FLUSH_BYTES + (64 << 10));
    super(path, w);
    this.w = w;
  }

  protected begin(h: TraceHeader): void {
    this.w.ascii(`{"traceEvents":[\n{"name":"process_name","ph":"M","pid":${h.pid},"tid":${h.pid},"args":{"name":`);
    this.w.text(processLabel(h));
    this.w.ascii('}}');
  }

  protected view(t: StreamEventType, fields: object, role: TimelineRole, threadInfo: boolean): ChromeView {
    return {
      role,
      threadInfo,
      instantHead: utf8(`,\n{"name":${JSON.stringify(t.key)},"cat":${JSON.stringify(t.descriptor.provider)},"ph":"i","ts":`),
      args: fieldsWriter(Object.keys(fields), new Map(t.layout.fields.map((f) => [f.name, f.type])), 'number', '}}'),
      counters: counterFields(t),
    };
  }

  /** `,"pid":P,"tid":T,"args":{` for a thread (or one of its span lanes), naming it the first time it is seen. */
  private pidTidArgs(threadId: number, lane = 0): Uint8Array {
    // Most events come in runs from one thread's own track.
    if (threadId === this.lastThread && lane === 0) return this.lastThreadArgs!;
    const b = this.laneArgs(threadId, lane);
    if (lane === 0) {
      this.lastThread = threadId;
      this.lastThreadArgs = b;
    }
    return b;
  }

  private laneArgs(threadId: number, lane: number): Uint8Array {
    const tid = this.threads.tid(threadId) + lane * LANE_TID_STRIDE;
    let b = this.tidArgs.get(tid);
    if (!b) {
      b = utf8(`,"pid":${this.header!.pid},"tid":${tid},"args":{`);
      this.tidArgs.set(tid, b);
      let lanes = this.lanes.get(threadId);
      if (!lanes) this.lanes.set(threadId, (lanes = new Set()));
      lanes.add(lane);
      this.threadName(threadId, lane);
    }
    return b;
  }

  private threadName(threadId: number, lane: number): void {
    const name = this.threads.name(threadId);
    this.w.ascii(`,\n{"name":"thread_name","ph":"M","pid":${this.header!.pid},"tid":${this.threads.tid(threadId) + lane * LANE_TID_STRIDE},"args":{"name":`);
    this.w.text(lane === 0 ? name : `${name} spans ${lane + 1}`);
    this.w.ascii('}}');
  }

  protected renamed(threadId: number): void {
    // A thread not seen yet gets its name when it is.
    for (const lane of this.lanes.get(threadId) ?? []) this.threadName(threadId, lane);
  }

  protected instant(e: BlockEvent, v: ChromeView): void {
    const args = this.pidTidArgs(e.threadId);
    const w = this.w;
    // Most of a conversion's events are instants: room for the head is reserved once, not per part.
    w.ensure(v.instantHead.length + MAX_MICROSECONDS_TEXT + args.length);
    const b = w.buf;
    const p = putMicroseconds(b, putBytes(b, w.pos, v.instantHead), e.timestampNs);
    w.pos = putBytes(b, p, args);
    v.args(w, e.fields);
  }

  protected counter(e: BlockEvent, v: ChromeView): void {
    const args = this.pidTidArgs(e.threadId);
    const w = this.w;
    // Chrome's counters belong to the process: a worker's carry its thread in the name.
    w.ascii(',\n{"name":');
    w.text(e.threadId === 0 ? counterGroup(e) : `${counterGroup(e)} [thread ${e.threadId}]`);
    w.ascii(',"cat":');
    w.text(e.provider);
    w.ascii(',"ph":"C","ts":');
    w.microseconds(e.timestampNs);
    w.raw(args);
    v.counters.forEach((f, i) => {
      w.ascii(i ? ',' : '');
      w.text(f.name);
      w.ascii(':');
      w.numericValue(e.fields[f.name]!);
    });
    w.ascii('}}');
  }

  protected slice(s: Slice): void {
    this.sliceOn(this.pidTidArgs(s.threadId), s);
  }

  /** A span as an `X` on its lane, then an `s` at the parent's start and an `f` at the child's for each arrow. */
  protected spanSlice(s: SpanSlice, flows: readonly SpanFlow[]): void {
    this.sliceOn(this.pidTidArgs(s.threadId, s.lane), s);
    const self: SpanPlace = { threadId: s.threadId, lane: s.lane, startNs: s.startNs, endNs: s.startNs + s.durationNs };
    for (const f of flows) {
      this.flowEnd('s', f.id, f.fromThis ? self : f.other);
      this.flowEnd('f', f.id, f.fromThis ? f.other : self);
    }
  }

  /** One end of an arrow, bound to the slice it lies in on its lane ("bp":"e" for the head, as the tail always is). */
  private flowEnd(phase: 's' | 'f', id: bigint, at: SpanPlace): void {
    const w = this.w;
    w.ascii(`,\n{"name":"span flow","cat":"tracepipe","ph":"${phase}",${phase === 'f' ? '"bp":"e",' : ''}"id":"${id}","ts":`);
    w.microseconds(at.startNs);
    w.ascii(`,"pid":${this.header!.pid},"tid":${this.threads.tid(at.threadId) + at.lane * LANE_TID_STRIDE}}`);
  }

  private sliceOn(args: Uint8Array, s: Slice): void {
    const w = this.w;
    w.ascii(',\n{"name":');
    w.text(s.name);
    w.ascii(',"cat":');
    w.text(s.category);
    w.ascii(s.durationNs === undefined ? ',"ph":"B","ts":' : ',"ph":"X","ts":');
    w.microseconds(s.startNs);
    if (s.durationNs !== undefined) {
      w.ascii(',"dur":');
      w.microseconds(s.durationNs);
    }
    w.raw(args);
    s.args.forEach(([k, , val], i) => {
      w.ascii(i ? ',' : '');
      w.text(k);
      w.ascii(':');
      w.numericValue(val);
    });
    w.ascii('}}');
  }

  protected drop(d: PlacedDrop): void {
    const args = this.pidTidArgs(d.threadId);
    this.w.ascii(',\n{"name":"dropped events","cat":"tracepipe","ph":"i","ts":');
    this.w.microseconds(d.timestampNs);
    this.w.raw(args);
    this.w.ascii(`"count":${d.count},"fromSeq":${d.fromSeq},"toSeq":${d.toSeq}}}`);
  }

  protected end(end: ExportEnd): void {
    const metadata = {
      tracepipe: this.header,
      droppedEvents: end.dropped,
      dropRanges: end.dropRanges,
      droppedByThread: Object.fromEntries(this.droppedByThread),
      complete: end.damage === undefined,
      ...(end.damage === undefined ? {} : { damage: end.damage }),
    };
    this.w.bytes(utf8(`\n],\n"displayTimeUnit":"ns",\n"metadata":${JSON.stringify(metadata)}}\n`));
  }
}
