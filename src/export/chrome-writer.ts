import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { fieldsWriter, type FieldsWriter, JsonWriter } from './json-text.js';
import { utf8 } from './text-writer.js';
import { counterFields, counterGroup, gcPauseSlice, isThreadInfo, processLabel, type Slice, StallSlices, ThreadNames, timelineRole, type TimelineRole } from './runtime-view.js';

/** What a type needs per event, worked out once per type. */
interface TypeView {
  readonly role: TimelineRole;
  readonly threadInfo: boolean;
  /** `,\n{"name":"Provider/Event","cat":"Provider","ph":"i","ts":` */
  readonly instant: Uint8Array;
  readonly args: FieldsWriter;
  readonly counters: readonly FieldLayout[];
}

/**
 * Chrome's Trace Event Format (`{"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}`), which
 * the Perfetto UI and chrome://tracing load: `X` slices for GC pauses and stalls, `C` counters, `i`
 * instants (thread scope, the default) with every field in `args`, `M` process and thread names.
 * Events are written in stream order: viewers sort on load, so nothing is held back.
 */
export class ChromeWriter implements ExportWriter {
  private out: ExportOutput | undefined;
  private readonly w = new JsonWriter(FLUSH_BYTES + (64 << 10));
  private header: TraceHeader | undefined;
  private threads = new ThreadNames(0);
  /** `,"pid":P,"tid":T,"args":{` per thread. */
  private readonly threadArgs = new Map<number, Uint8Array>();
  private readonly stalls = new StallSlices();
  private readonly types = new Map<StreamEventType, TypeView>();
  private readonly droppedByThread = new Map<number, number>();

  constructor(private readonly path: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.out) await this.open(batch.header);
    for (const d of batch.drops) this.drop(d);
    for (const e of batch.events) this.event(e);
    if (this.w.pos >= FLUSH_BYTES) await this.flush();
  }

  private async open(h: TraceHeader): Promise<void> {
    this.out = await ExportOutput.create(this.path);
    this.header = h;
    this.threads = new ThreadNames(h.pid);
    this.w.ascii(`{"traceEvents":[\n{"name":"process_name","ph":"M","pid":${h.pid},"tid":${h.pid},"args":{"name":`);
    this.w.text(processLabel(h));
    this.w.ascii('}}');
  }

  private async flush(): Promise<void> {
    await this.out!.write(this.w.buf.subarray(0, this.w.pos));
    this.w.pos = 0;
  }

  private view(t: StreamEventType, fields: object): TypeView {
    let v = this.types.get(t);
    if (!v) {
      v = {
        role: timelineRole(t),
        threadInfo: isThreadInfo(t),
        instant: utf8(`,\n{"name":${JSON.stringify(t.key)},"cat":${JSON.stringify(t.descriptor.provider)},"ph":"i","ts":`),
        args: fieldsWriter(Object.keys(fields), new Map(t.layout.fields.map((f) => [f.name, f.type])), 'number'),
        counters: counterFields(t),
      };
      this.types.set(t, v);
    }
    return v;
  }

  /** `,"pid":P,"tid":T,"args":{` for a thread, naming it the first time it is seen. */
  private pidTidArgs(threadId: number): Uint8Array {
    let b = this.threadArgs.get(threadId);
    if (!b) {
      const tid = this.threads.tid(threadId);
      b = utf8(`,"pid":${this.header!.pid},"tid":${tid},"args":{`);
      this.threadArgs.set(threadId, b);
      this.threadName(threadId);
    }
    return b;
  }

  private threadName(threadId: number): void {
    const w = this.w;
    w.ascii(`,\n{"name":"thread_name","ph":"M","pid":${this.header!.pid},"tid":${this.threads.tid(threadId)},"args":{"name":`);
    w.text(this.threads.name(threadId));
    w.ascii('}}');
  }

  private event(e: BlockEvent): void {
    const v = this.view(e.type, e.fields);
    const w = this.w;
    switch (v.role) {
      case 'gc-pause':
        return this.slice(gcPauseSlice(e));
      case 'stall-start':
        return this.stalls.start(e);
      case 'stall-end':
        return this.slice(this.stalls.end(e));
      case 'counter': {
        const args = this.pidTidArgs(e.threadId);
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
        return;
      }
    }
    const args = this.pidTidArgs(e.threadId);
    w.raw(v.instant);
    w.microseconds(e.timestampNs);
    w.raw(args);
    v.args(w, e.fields);
    w.ascii('}}');
    if (v.threadInfo) {
      const renamed = this.threads.observe(e);
      // A thread not seen yet gets its name when it is.
      if (renamed !== undefined && this.threadArgs.has(renamed)) this.threadName(renamed);
    }
  }

  private slice(s: Slice): void {
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

  private drop(d: PlacedDrop): void {
    this.droppedByThread.set(d.threadId, (this.droppedByThread.get(d.threadId) ?? 0) + d.count);
    const args = this.pidTidArgs(d.threadId);
    this.w.ascii(',\n{"name":"dropped events","cat":"tracepipe","ph":"i","ts":');
    this.w.microseconds(d.timestampNs);
    this.w.raw(args);
    this.w.ascii(`"count":${d.count},"fromSeq":${d.fromSeq},"toSeq":${d.toSeq}}}`);
  }

  async finish(end: ExportEnd): Promise<ExportFiles> {
    for (const s of this.stalls.unfinished()) this.slice(s);
    const metadata = {
      tracepipe: this.header,
      droppedEvents: end.dropped,
      dropRanges: end.dropRanges,
      droppedByThread: Object.fromEntries(this.droppedByThread),
      complete: end.damage === undefined,
      ...(end.damage === undefined ? {} : { damage: end.damage }),
    };
    this.w.bytes(utf8(`\n],\n"displayTimeUnit":"ns",\n"metadata":${JSON.stringify(metadata)}}\n`));
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }
}
