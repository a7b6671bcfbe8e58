import { CpuProfileBuilder, framesOf, frameName, NO_FRAME, UNRESOLVED_FRAME, UNRESOLVED_STACK } from '../analysis/cpu-profile.js';
import { SourceMapper, sourceMapNotes } from '../analysis/source-maps.js';
import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { PlacedDrop } from '../format/trace-reader.js';
import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { FieldType } from '../schema/field-type.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles } from './export-writer.js';
import { hex } from './text-writer.js';
import { ProtobufWriter } from '../format/protobuf-writer.js';
import { type Slice } from './runtime-view.js';
import { counterFields, counterGroup, type TimelineRole } from '../format/timeline-role.js';
import { processLabel } from '../format/stream-header.js';
import type { SpanFlow, SpanPlace, SpanSlice } from './span-slices.js';
import { TimelineWriter, type TypeView } from './timeline-writer.js';

// Field numbers from Perfetto's protos/perfetto/trace/*.proto (checked against the published files;
// test/fixtures/perfetto-trace.proto restates the subset used here for protoc).
const Trace = { packet: 1 } as const;
const Packet = {
  clockSnapshot: 6, timestamp: 8, sequenceId: 10, trackEvent: 11, internedData: 12, sequenceFlags: 13,
  chromeEvents: 5, trackDescriptor: 60, perfSample: 66, firstPacketOnSequence: 87,
} as const;
const SEQ_INCREMENTAL_STATE_CLEARED = 1;
const SEQ_NEEDS_INCREMENTAL_STATE = 2;
const Clock = { clocks: 1, clockId: 1, timestamp: 2, REALTIME: 1, MONOTONIC: 3, BOOTTIME: 6 } as const;
const Track = { uuid: 1, name: 2, process: 3, thread: 4, parentUuid: 5, counter: 8 } as const;
const ProcessDesc = { pid: 1, cmdline: 2, processName: 6 } as const;
const ThreadDesc = { pid: 1, tid: 2, threadName: 5 } as const;
const Counter = { unit: 3, UNIT_SIZE_BYTES: 3 } as const;
const Event = {
  categoryIids: 3, debugAnnotations: 4, type: 9, nameIid: 10, trackUuid: 11, counterValue: 30, doubleCounterValue: 44,
  flowIds: 47, terminatingFlowIds: 48,
  SLICE_BEGIN: 1, SLICE_END: 2, INSTANT: 3, COUNTER: 4,
} as const;
const Annotation = { nameIid: 1, bool: 2, uint: 3, int: 4, double: 5, string: 6 } as const;
const Interned = {
  categories: 1, eventNames: 2, annotationNames: 3, functionNames: 5, frames: 6, callstacks: 7, sourcePaths: 18,
  iid: 1, name: 2,
} as const;
// profiling/profile_common.proto (Frame, Callstack) and profile_packet.proto (PerfSample).
const InternedString = { iid: 1, str: 2 } as const;
const Frame = { iid: 1, functionNameId: 2, sourcePathIid: 5, lineNumber: 6 } as const;
const Callstack = { iid: 1, frameIds: 2 } as const;
const PerfSample = { pid: 2, tid: 3, callstackIid: 4 } as const;
const Metadata = { metadata: 2, name: 1, stringValue: 2, intValue: 4, jsonValue: 5 } as const;

/** One trusted sequence carries everything: interning state is per sequence. */
const SEQUENCE = 1;
const PROCESS_TRACK = 1;
/** The frame key of UNRESOLVED_FRAME, the one frame of a sample whose stack the stream never defined. */
const UNRESOLVED = -1;
const TWO32 = 4294967296n;

type FieldValue = DecodedFields[string];

/** Interned strings of one kind (names, categories, annotation names); new ones go out with the next packet. */
class Interner {
  private readonly iids = new Map<string, number>();
  fresh: Array<[number, string]> = [];

  iid(s: string): number {
    let id = this.iids.get(s);
    if (id === undefined) {
      id = this.iids.size + 1;
      this.iids.set(s, id);
      this.fresh.push([id, s]);
    }
    return id;
  }
}

interface PerfettoView extends TypeView {
  readonly name: number;
  readonly category: number;
  readonly annotations: AnnotationsWriter;
  readonly counters: readonly FieldLayout[];
}

/** Writes a type's fields as debug annotations. */
type AnnotationsWriter = (pb: ProtobufWriter, fields: DecodedFields) => void;

/** A field's debug-annotation value: which DebugAnnotation field holds it, and in what wire form. */
function annotationValue(type: FieldType): { field: number; write: 'varint' | 'double' | 'bigint' | 'string' } {
  switch (type) {
    case 'bool': return { field: Annotation.bool, write: 'varint' };
    case 'u8': case 'u16': case 'u32': return { field: Annotation.uint, write: 'varint' };
    case 'i8': case 'i16': case 'i32': return { field: Annotation.int, write: 'varint' };
    case 'u64': return { field: Annotation.uint, write: 'bigint' };
    case 'i64': return { field: Annotation.int, write: 'bigint' };
    case 'f32': case 'f64': return { field: Annotation.double, write: 'double' };
    case 'string': case 'bytes': return { field: Annotation.string, write: 'string' };
  }
}

/**
 * A type's debug-annotation writer: per field, the constant bytes (the interned name and the value's
 * tag) made once, then a write of the field by a constant key; numbers take the one-pass
 * small-message path. Strings and 64-bit integers (whose size varies) go through begin/end. The
 * writes are generated as straight-line code, or run as a loop where code generation is refused
 * (code-generation.ts).
 */
function annotationsWriter(fields: ReadonlyArray<readonly [string, FieldType, number]>): AnnotationsWriter {
  const heads = fields.map(([, type, iid]) => {
    const value = annotationValue(type);
    const head = new ProtobufWriter(16);
    head.uint(Annotation.nameIid, iid);
    if (value.write === 'varint') head.tag(value.field, 0);
    else if (value.write === 'double') head.tag(value.field, 1);
    return head.buf.slice(0, head.pos);
  });
  if (!codeGenerationAllowed) {
    const values = fields.map(([, type]) => annotationValue(type));
    return (pb, f) => {
      for (let i = 0; i < fields.length; i++) {
        const [key, type] = fields[i]!;
        const { field, write } = values[i]!;
        const v = f[key];
        if (write === 'varint') pb.smallWithVarint(Event.debugAnnotations, heads[i]!, type === 'bool' ? (v ? 1 : 0) : (v as number));
        else if (write === 'double') pb.smallWithDouble(Event.debugAnnotations, heads[i]!, v as number);
        else {
          pb.begin(Event.debugAnnotations);
          pb.bytes(heads[i]!);
          if (write === 'bigint') pb.bigint(field, v as bigint);
          else pb.str(field, type === 'bytes' ? hex(v as Uint8Array) : (v as string));
          pb.end();
        }
      }
    };
  }
  const lines = fields.map(([key, type], i) => {
    const value = annotationValue(type);
    const f = `f[${JSON.stringify(key)}]`;
    switch (value.write) {
      case 'varint':
        return `pb.smallWithVarint(${Event.debugAnnotations}, h[${i}], ${type === 'bool' ? `${f} ? 1 : 0` : f});`;
      case 'double':
        return `pb.smallWithDouble(${Event.debugAnnotations}, h[${i}], ${f});`;
      default:
        return `pb.begin(${Event.debugAnnotations}); pb.bytes(h[${i}]); ${value.write === 'bigint' ? `pb.bigint(${value.field}, ${f})` : `pb.str(${value.field}, ${type === 'bytes' ? `hex(${f})` : f})`}; pb.end();`;
    }
  });
  return new Function('h', 'hex', `return function writeAnnotations(pb, f) {\n  ${lines.join('\n  ')}\n};`)(heads, hex) as AnnotationsWriter;
}

/**
 * Perfetto's native trace: a `Trace` of `TracePacket`s on one sequence. A clock snapshot ties the
 * process monotonic clock (the packets' timestamps, given as BOOTTIME, Perfetto's default trace
 * clock) to the header's wall clock; a process track and one track per thread (named from the
 * rundown); GC pauses and stalls as slices on "GC" and "event loop" tracks under their thread; spans
 * as slices on their thread's track (or on "spans N" tracks under it, where they overlap without
 * nesting), with flow arrows to children drawn elsewhere; heap and loop figures and declared counters
 * as counter tracks; every other event an instant with its fields as debug annotations; drops as
 * instants and as metadata.
 */
export class PerfettoWriter extends TimelineWriter<PerfettoView> {
  private readonly pb: ProtobufWriter;
  private baseHi = 0;
  private baseLo = 0;
  private readonly threadTracks = new Map<number, number>();
  private readonly childTracks = new Map<string, number>();
  private nextUuid = PROCESS_TRACK + 1;
  private readonly names = new Interner();
  private readonly categories = new Interner();
  private readonly annotationNames = new Interner();
  /** The sampler's frames and stacks, merged across writers as in every view; samples go out as read. */
  private readonly cpu = new CpuProfileBuilder((thread, timestampNs, stack) => this.perfSample(thread, timestampNs, stack));
  /** Frames go out as they come, so each is put at its original location as it is interned. */
  private readonly sourceMaps = new SourceMapper();
  private readonly functionNames = new Interner();
  private readonly sourcePaths = new Interner();
  /** Perfetto iids of the profile's frames and stacks written so far (the frame UNRESOLVED stands in for unresolved stacks). */
  private readonly frameIids = new Map<number, number>();
  private readonly callstackIids = new Map<number, number>();
  private readonly dropName = this.names.iid('dropped events');
  private readonly flowName = this.names.iid('span flow');
  private readonly tracepipeCategory = this.categories.iid('tracepipe');

  constructor(path: string) {
    const pb = new ProtobufWriter(FLUSH_BYTES + (64 << 10));
    super(path, pb);
    this.pb = pb;
  }

  protected begin(h: TraceHeader): void {
    const mono = BigInt(h.clock.monotonicNs);
    this.baseHi = Number(mono / TWO32);
    this.baseLo = Number(mono % TWO32);
    const pb = this.pb;
    pb.begin(Trace.packet);
    pb.uint(Packet.sequenceId, SEQUENCE);
    pb.uint(Packet.sequenceFlags, SEQ_INCREMENTAL_STATE_CLEARED);
    pb.bool(Packet.firstPacketOnSequence, true);
    pb.begin(Packet.clockSnapshot);
    // Perfetto's trace clock is BOOTTIME; the process monotonic clock stands for it (they differ
    // only by time spent suspended), and REALTIME puts the trace at its wall-clock time.
    for (const [id, ns] of [[Clock.BOOTTIME, h.clock.monotonicNs], [Clock.MONOTONIC, h.clock.monotonicNs], [Clock.REALTIME, h.clock.wallClockNs]] as const) {
      pb.begin(Clock.clocks);
      pb.uint(Clock.clockId, id);
      pb.bigint(Clock.timestamp, BigInt(ns));
      pb.end();
    }
    pb.end();
    pb.end();
    this.descriptor(0, PROCESS_TRACK, () => {
      pb.begin(Track.process);
      pb.int(ProcessDesc.pid, h.pid);
      for (const a of h.argv) pb.str(ProcessDesc.cmdline, a);
      pb.str(ProcessDesc.processName, processLabel(h));
      pb.end();
    });
  }

/** Opens a packet at `timestampNs` (trace ns) on the sequence. */
  private packet(timestampNs: number): void {
    const pb = this.pb;
    pb.begin(Trace.packet);
    pb.uintSum(Packet.timestamp, this.baseHi, this.baseLo, timestampNs);
    pb.uint(Packet.sequenceId, SEQUENCE);
  }

  private descriptor(timestampNs: number, uuid: number, body: () => void, parent?: number, name?: string): void {
    const pb = this.pb;
    this.packet(timestampNs);
    pb.begin(Packet.trackDescriptor);
    pb.uint(Track.uuid, uuid);
    if (parent !== undefined) pb.uint(Track.parentUuid, parent);
    if (name !== undefined) pb.str(Track.name, name);
    body();
    pb.end();
    pb.end();
  }

  private threadDescriptor(timestampNs: number, threadId: number, uuid: number): void {
    const pb = this.pb;
    this.descriptor(timestampNs, uuid, () => {
      pb.begin(Track.thread);
      pb.int(ThreadDesc.pid, this.header!.pid);
      pb.int(ThreadDesc.tid, this.threads.tid(threadId));
      pb.str(ThreadDesc.threadName, this.threads.name(threadId));
      pb.end();
    });
  }

  private threadTrack(threadId: number, timestampNs: number): number {
    let uuid = this.threadTracks.get(threadId);
    if (uuid === undefined) {
      uuid = this.nextUuid++;
      this.threadTracks.set(threadId, uuid);
      this.threadDescriptor(timestampNs, threadId, uuid);
    }
    return uuid;
  }

  /** A track under a thread's: "GC", "event loop", or a counter. */
  private childTrack(threadId: number, name: string, timestampNs: number, counterUnit?: number | null): number {
    const key = `${threadId}/${name}`;
    let uuid = this.childTracks.get(key);
    if (uuid === undefined) {
      const parent = this.threadTrack(threadId, timestampNs);
      uuid = this.nextUuid++;
      this.childTracks.set(key, uuid);
      const pb = this.pb;
      this.descriptor(timestampNs, uuid, () => {
        if (counterUnit === undefined) return;
        pb.begin(Track.counter);
        if (counterUnit !== null) pb.uint(Counter.unit, counterUnit);
        pb.end();
      }, parent, name);
    }
    return uuid;
  }

  protected view(t: StreamEventType, fields: object, role: TimelineRole, threadInfo: boolean): PerfettoView {
    const types = new Map(t.layout.fields.map((f) => [f.name, f.type]));
    return {
      role,
      threadInfo,
      name: this.names.iid(t.key),
      category: this.categories.iid(t.descriptor.provider),
      annotations: annotationsWriter(Object.keys(fields).map((k) => [k, types.get(k)!, this.annotationNames.iid(k)] as const)),
      counters: counterFields(t),
    };
  }

  /** Opens a TrackEvent (its packet first, with any interned strings it is the first to use). */
  private trackEvent(timestampNs: number, type: number, track: number, category?: number, name?: number): void {
    const pb = this.pb;
    this.packet(timestampNs);
    pb.uint(Packet.sequenceFlags, SEQ_NEEDS_INCREMENTAL_STATE);
    this.internedData();
    pb.begin(Packet.trackEvent);
    pb.uint(Event.type, type);
    pb.uint(Event.trackUuid, track);
    if (category !== undefined) pb.uint(Event.categoryIids, category);
    if (name !== undefined) pb.uint(Event.nameIid, name);
  }

  private closeTrackEvent(): void {
    this.pb.end();
    this.pb.end();
  }

  private internedData(): void {
    if (this.categories.fresh.length + this.names.fresh.length + this.annotationNames.fresh.length === 0) return;
    const lists = [[Interned.categories, this.categories], [Interned.eventNames, this.names], [Interned.annotationNames, this.annotationNames]] as const;
    const pb = this.pb;
    pb.begin(Packet.internedData);
    for (const [field, interner] of lists) {
      for (const [iid, s] of interner.fresh) {
        pb.begin(field);
        pb.uint(Interned.iid, iid);
        pb.str(Interned.name, s);
        pb.end();
      }
      interner.fresh = [];
    }
    pb.end();
  }

  /** One annotation outside a type's generated writer (slices' arguments, drops). */
  private annotation(nameIid: number, type: FieldType, v: FieldValue): void {
    const pb = this.pb;
    const value = annotationValue(type);
    pb.begin(Event.debugAnnotations);
    pb.uint(Annotation.nameIid, nameIid);
    switch (value.write) {
      case 'varint': pb.int(value.field, type === 'bool' ? (v ? 1 : 0) : (v as number)); break;
      case 'double': pb.double(value.field, v as number); break;
      case 'bigint': pb.bigint(value.field, v as bigint); break;
      case 'string': pb.str(value.field, type === 'bytes' ? hex(v as Uint8Array) : (v as string)); break;
    }
    pb.end();
  }

  protected counter(e: BlockEvent, v: PerfettoView): void {
    const group = counterGroup(e);
    for (const f of v.counters) {
      const value = e.fields[f.name]!;
      const track = this.childTrack(e.threadId, `${group} ${f.name}`, e.timestampNs, f.name.endsWith('Bytes') || f.name === 'bytes' ? Counter.UNIT_SIZE_BYTES : null);
      this.trackEvent(e.timestampNs, Event.COUNTER, track);
      if (f.type === 'f32' || f.type === 'f64') this.pb.double(Event.doubleCounterValue, value as number);
      else if (typeof value === 'bigint') this.pb.bigint(Event.counterValue, value);
      else this.pb.int(Event.counterValue, value as number);
      this.closeTrackEvent();
    }
  }

  protected instant(e: BlockEvent, v: PerfettoView): void {
    const track = this.threadTrack(e.threadId, e.timestampNs);
    this.trackEvent(e.timestampNs, Event.INSTANT, track, v.category, v.name);
    v.annotations(this.pb, e.fields);
    this.closeTrackEvent();
  }

  protected override cpuSample(e: BlockEvent): void {
    this.cpu.add(e);
  }

  /**
   * A sample as a PerfSample packet at its own time, its thread named by pid and tid, and the frames
   * and callstack it is the first to use interned in the same packet. The trace processor puts
   * PerfSample and StreamingProfilePacket samples in the same table and the UI draws either as a
   * callstack track under the sampled thread's, with a flame graph for a selected range. PerfSample
   * is the one that fits: its timestamp is the packet's, in nanoseconds on the trace clock, and it
   * names its thread itself, so every sample stays on the one sequence whose interned data the frames
   * share. StreamingProfilePacket gives microsecond deltas from a ThreadDescriptor's reference time
   * (deprecated in its proto) and takes its thread from the sequence, so it would need a sequence,
   * with its own interned frames, per thread.
   */
  private perfSample(thread: number, timestampNs: number, stack: number): void {
    // The thread's descriptor names the thread the samples are drawn under.
    this.threadTrack(thread, timestampNs);
    const pb = this.pb;
    this.packet(timestampNs);
    pb.uint(Packet.sequenceFlags, SEQ_NEEDS_INCREMENTAL_STATE);
    // A sample of no frame has no callstack: Perfetto counts it, on no function.
    const callstack = stack === NO_FRAME ? 0 : this.callstack(stack);
    pb.begin(Packet.perfSample);
    pb.uint(PerfSample.pid, this.header!.pid);
    pb.uint(PerfSample.tid, this.threads.tid(thread));
    if (callstack > 0) pb.uint(PerfSample.callstackIid, callstack);
    pb.end();
    pb.end();
  }

  /**
   * A stack's callstack iid. The first time, the packet's interned data gets the callstack (its frames
   * the outermost first, as Perfetto reads them) and the frames, names and source paths it is the first
   * to use. A frame carries its function's name, script URL and line (Perfetto frames have no column),
 * at its original location where a source map gives one.
   */
  private callstack(stack: number): number {
    let iid = this.callstackIids.get(stack);
    if (iid !== undefined) return iid;
    iid = this.callstackIids.size + 1;
    this.callstackIids.set(stack, iid);
    const table = this.cpu.stackTable();
    const frames = stack === UNRESOLVED_STACK ? [UNRESOLVED] : framesOf(table, stack).reverse();
    const fresh: Array<[number, number, number, number]> = [];
    const frameIds = frames.map((f) => {
      let id = this.frameIids.get(f);
      if (id === undefined) {
        id = this.frameIids.size + 1;
        this.frameIids.set(f, id);
        const frame = f === UNRESOLVED ? undefined : this.sourceMaps.map(table.frames[f]!);
        const name = this.functionNames.iid(frame ? frameName(frame) : UNRESOLVED_FRAME);
        fresh.push([id, name, frame?.url ? this.sourcePaths.iid(frame.url) : 0, frame?.line ?? 0]);
      }
      return id;
    });
    const pb = this.pb;
    pb.begin(Packet.internedData);
    for (const [field, interner] of [[Interned.functionNames, this.functionNames], [Interned.sourcePaths, this.sourcePaths]] as const) {
      for (const [id, str] of interner.fresh) {
        pb.begin(field);
        pb.uint(InternedString.iid, id);
        pb.str(InternedString.str, str);
        pb.end();
      }
      interner.fresh = [];
    }
    for (const [id, name, sourcePath, line] of fresh) {
      pb.begin(Interned.frames);
      pb.uint(Frame.iid, id);
      pb.uint(Frame.functionNameId, name);
      if (sourcePath > 0) pb.uint(Frame.sourcePathIid, sourcePath);
      if (line > 0) pb.uint(Frame.lineNumber, line);
      pb.end();
    }
    pb.begin(Interned.callstacks);
    pb.uint(Callstack.iid, iid);
    for (const id of frameIds) pb.uint(Callstack.frameIds, id);
    pb.end();
    pb.end();
    return iid;
  }

  protected renamed(threadId: number, timestampNs: number): void {
    // A thread without a track yet gets its name when it gets one.
    const uuid = this.threadTracks.get(threadId);
    if (uuid !== undefined) this.threadDescriptor(timestampNs, threadId, uuid);
  }

  protected slice(s: Slice, trackName: string): void {
    this.sliceOn(this.childTrack(s.threadId, trackName, s.startNs), s, []);
  }

  /**
   * A span on its lane: lane 0 is the thread's own track, the others tracks under it. An arrow's end
   * on a slice drawn before this one is a "span flow" instant inside that slice; the source of each
   * arrow goes out first, so that equal times keep the arrow's direction.
   */
  protected spanSlice(s: SpanSlice, flows: readonly SpanFlow[]): void {
    for (const f of flows) if (!f.fromThis) this.flowMarker(f.other, Event.flowIds, f.id);
    this.sliceOn(this.laneTrack(s.threadId, s.lane, s.startNs), s, flows);
    for (const f of flows) if (f.fromThis) this.flowMarker(f.other, Event.terminatingFlowIds, f.id);
  }

  private laneTrack(threadId: number, lane: number, timestampNs: number): number {
    return lane === 0 ? this.threadTrack(threadId, timestampNs) : this.childTrack(threadId, `spans ${lane + 1}`, timestampNs);
  }

  private sliceOn(track: number, s: Slice, flows: readonly SpanFlow[]): void {
    this.trackEvent(s.startNs, Event.SLICE_BEGIN, track, this.categories.iid(s.category), this.names.iid(s.name));
    for (const [k, type, val] of s.args) this.annotation(this.annotationNames.iid(k), type, val);
    for (const f of flows) this.pb.fixed64(f.fromThis ? Event.flowIds : Event.terminatingFlowIds, f.id);
    this.closeTrackEvent();
    if (s.durationNs === undefined) return;
    this.trackEvent(s.startNs + s.durationNs, Event.SLICE_END, track);
    this.closeTrackEvent();
  }

  /** An arrow's end inside a slice drawn earlier, at its start (`field`: flowIds for the parent's end, terminatingFlowIds for the child's). */
  private flowMarker(at: SpanPlace, field: number, id: bigint): void {
    this.trackEvent(at.startNs, Event.INSTANT, this.laneTrack(at.threadId, at.lane, at.startNs), this.tracepipeCategory, this.flowName);
    this.pb.fixed64(field, id);
    this.closeTrackEvent();
  }

  protected drop(d: PlacedDrop): void {
    const track = this.threadTrack(d.threadId, d.timestampNs);
    this.trackEvent(d.timestampNs, Event.INSTANT, track, this.tracepipeCategory, this.dropName);
    this.annotation(this.annotationNames.iid('count'), 'u32', d.count);
    this.annotation(this.annotationNames.iid('fromSeq'), 'u32', d.fromSeq);
    this.annotation(this.annotationNames.iid('toSeq'), 'u32', d.toSeq);
    this.closeTrackEvent();
  }

  override async finish(end: ExportEnd): Promise<ExportFiles> {
    const files = await super.finish(end);
    const notes = this.frameIids.size > 0 ? sourceMapNotes(this.sourceMaps.summary()) : [];
    return notes.length > 0 ? { ...files, notes } : files;
  }

  protected end(end: ExportEnd): void {
    // Metadata entries: the trace processor lists them in its metadata table (as cr-<name>).
    const pb = this.pb;
    pb.begin(Trace.packet);
    pb.uint(Packet.sequenceId, SEQUENCE);
    pb.begin(Packet.chromeEvents);
    const entry = (name: string, value: () => void) => {
      pb.begin(Metadata.metadata);
      pb.str(Metadata.name, name);
      value();
      pb.end();
    };
    entry('tracepipe-dropped-events', () => pb.uint(Metadata.intValue, end.dropped));
    entry('tracepipe-drop-ranges', () => pb.uint(Metadata.intValue, end.dropRanges));
    entry('tracepipe-dropped-by-thread', () => pb.str(Metadata.jsonValue, JSON.stringify(Object.fromEntries(this.droppedByThread))));
    entry('tracepipe-trace', () => pb.str(Metadata.jsonValue, JSON.stringify(this.header)));
    if (end.damage !== undefined) entry('tracepipe-damage', () => pb.str(Metadata.stringValue, end.damage!));
    pb.end();
    pb.end();
  }
}
