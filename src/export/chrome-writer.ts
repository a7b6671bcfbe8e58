import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { PlacedDrop } from '../format/trace-reader.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { FLUSH_BYTES } from './export-output.js';
import type { ExportEnd } from './export-writer.js';
import { fieldsWriter, type FieldsWriter, JsonWriter } from './json-text.js';
import { counterFields, counterGroup, processLabel, type Slice, type TimelineRole } from './runtime-view.js';
import { utf8 } from './text-writer.js';
import { TimelineWriter, type TypeView } from './timeline-writer.js';

interface ChromeView extends TypeView {
  /** `,\n{"name":"Provider/Event","cat":"Provider","ph":"i","ts":` */
  readonly instantHead: Uint8Array;
  readonly args: FieldsWriter;
  readonly counters: readonly FieldLayout[];
}

/**
 * Chrome's Trace Event Format (`{"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}`), which
 * the Perfetto UI and chrome://tracing load: `X` slices for GC pauses and stalls on their thread, `C`
 * counters, `i` instants (thread scope, the default) with every field in `args`, `M` process and
 * thread names. Times are microseconds with the nanoseconds as three exact decimals.
 */
export class ChromeWriter extends TimelineWriter<ChromeView> {
  private readonly w: JsonWriter;
  /** `,"pid":P,"tid":T,"args":{` per thread seen. */
  private readonly threadArgs = new Map<number, Uint8Array>();

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
      args: fieldsWriter(Object.keys(fields), new Map(t.layout.fields.map((f) => [f.name, f.type])), 'number'),
      counters: counterFields(t),
    };
  }

  /** `,"pid":P,"tid":T,"args":{` for a thread, naming it the first time it is seen. */
  private pidTidArgs(threadId: number): Uint8Array {
    let b = this.threadArgs.get(threadId);
    if (!b) {
      b = utf8(`,"pid":${this.header!.pid},"tid":${this.threads.tid(threadId)},"args":{`);
      this.threadArgs.set(threadId, b);
      this.threadName(threadId);
    }
    return b;
  }

  private threadName(threadId: number): void {
    this.w.ascii(`,\n{"name":"thread_name","ph":"M","pid":${this.header!.pid},"tid":${this.threads.tid(threadId)},"args":{"name":`);
    this.w.text(this.threads.name(threadId));
    this.w.ascii('}}');
  }

  protected renamed(threadId: number): void {
    // A thread not seen yet gets its name when it is.
    if (this.threadArgs.has(threadId)) this.threadName(threadId);
  }

  protected instant(e: BlockEvent, v: ChromeView): void {
    const args = this.pidTidArgs(e.threadId);
    const w = this.w;
    w.raw(v.instantHead);
    w.microseconds(e.timestampNs);
    w.raw(args);
    v.args(w, e.fields);
    w.ascii('}}');
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
    const args = this.pidTidArgs(s.threadId);
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
