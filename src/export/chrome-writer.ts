import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { numericJsonValue } from './json-text.js';
import { counterFields, counterGroup, gcPauseSlice, isThreadInfo, processLabel, type Slice, StallSlices, ThreadNames, timelineRole, type TimelineRole } from './runtime-view.js';

/** What a type needs per event, worked out once per type. */
interface TypeView {
  readonly role: TimelineRole;
  readonly threadInfo: boolean;
  /** `"name":"Provider/Event","cat":"Provider",` */
  readonly nameAndCategory: string;
  /** `"field":` per field, in the order of the decoded object. */
  readonly keys: readonly (readonly [string, string])[];
  readonly counters: readonly FieldLayout[];
}

/** Microseconds (the format's unit) with the nanoseconds as exact decimals. */
const us = (ns: number): string => String(ns / 1000);

/**
 * Chrome's Trace Event Format (`{"traceEvents":[...],"displayTimeUnit":"ns","metadata":{...}}`), which
 * the Perfetto UI and chrome://tracing load: `X` slices for GC pauses and stalls, `C` counters, `i`
 * instants with every field in `args`, `M` process and thread names. Events are written in stream
 * order: viewers sort on load, so nothing is held back and memory stays flat.
 */
export class ChromeWriter implements ExportWriter {
  readonly order = 'stream';
  private out: ExportOutput | undefined;
  private text = '';
  private pid = 0;
  private threads = new ThreadNames(0);
  private readonly stalls = new StallSlices();
  private readonly types = new Map<StreamEventType, TypeView>();
  private readonly droppedByThread = new Map<number, number>();
  private header: TraceHeader | undefined;

  constructor(private readonly path: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.out) await this.open(batch.header);
    for (const d of batch.drops) this.drop(d);
    for (const e of batch.events) this.event(e);
    if (this.text.length >= FLUSH_BYTES) await this.flush();
  }

  private async open(h: TraceHeader): Promise<void> {
    this.out = await ExportOutput.create(this.path);
    this.header = h;
    this.pid = h.pid;
    this.threads = new ThreadNames(h.pid);
    this.text = `{"traceEvents":[\n{"name":"process_name","ph":"M","pid":${this.pid},"tid":${this.pid},"args":{"name":${JSON.stringify(processLabel(h))}}}`;
  }

  private async flush(): Promise<void> {
    const text = this.text;
    this.text = '';
    await this.out!.write(text);
  }

  private view(t: StreamEventType, fields: object): TypeView {
    let v = this.types.get(t);
    if (!v) {
      const d = t.descriptor;
      v = {
        role: timelineRole(t),
        threadInfo: isThreadInfo(t),
        nameAndCategory: `"name":${JSON.stringify(t.key)},"cat":${JSON.stringify(d.provider)},`,
        // The decoded object's own key order, which is what dump and JSON.stringify show.
        keys: Object.keys(fields).map((k) => [k, `${JSON.stringify(k)}:`] as const),
        counters: counterFields(t),
      };
      this.types.set(t, v);
    }
    return v;
  }

  /** Emits the thread's name the first time it is seen. */
  private tid(threadId: number): number {
    if (!this.threads.has(threadId)) this.threadName(threadId);
    return this.threads.tid(threadId);
  }

  private threadName(threadId: number): void {
    const name = this.threads.name(threadId);
    this.text += `,\n{"name":"thread_name","ph":"M","pid":${this.pid},"tid":${this.threads.tid(threadId)},"args":{"name":${JSON.stringify(name)}}}`;
  }

  private event(e: BlockEvent): void {
    const v = this.view(e.type, e.fields);
    switch (v.role) {
      case 'gc-pause':
        return this.slice(gcPauseSlice(e));
      case 'stall-start':
        return this.stalls.start(e);
      case 'stall-end':
        return this.slice(this.stalls.end(e));
      case 'counter': {
        let args = '';
        for (const f of v.counters) args += `${args ? ',' : ''}${JSON.stringify(f.name)}:${numericJsonValue(e.fields[f.name]!)}`;
        const name = e.threadId === 0 ? counterGroup(e) : `${counterGroup(e)} [thread ${e.threadId}]`;
        this.text += `,\n{"name":${JSON.stringify(name)},"cat":${JSON.stringify(e.provider)},"ph":"C","ts":${us(e.timestampNs)},"pid":${this.pid},"tid":${this.tid(e.threadId)},"args":{${args}}}`;
        return;
      }
    }
    let args = '';
    const fields = e.fields;
    for (const [k, prefix] of v.keys) args += `${args ? ',' : ''}${prefix}${numericJsonValue(fields[k]!)}`;
    this.text += `,\n{${v.nameAndCategory}"ph":"i","s":"t","ts":${us(e.timestampNs)},"pid":${this.pid},"tid":${this.tid(e.threadId)},"args":{${args}}}`;
    if (v.threadInfo) {
      const renamed = this.threads.observe(e);
      if (renamed !== undefined) this.threadName(renamed);
    }
  }

  private slice(s: Slice): void {
    const args = s.args.map(([k, , val]) => `${JSON.stringify(k)}:${numericJsonValue(val)}`).join(',');
    const timing = s.durationNs === undefined ? `"ph":"B","ts":${us(s.startNs)}` : `"ph":"X","ts":${us(s.startNs)},"dur":${us(s.durationNs)}`;
    this.text += `,\n{"name":${JSON.stringify(s.name)},"cat":${JSON.stringify(s.category)},${timing},"pid":${this.pid},"tid":${this.tid(s.threadId)},"args":{${args}}}`;
  }

  private drop(d: PlacedDrop): void {
    this.droppedByThread.set(d.threadId, (this.droppedByThread.get(d.threadId) ?? 0) + d.count);
    this.text += `,\n{"name":"dropped events","cat":"tracepipe","ph":"i","s":"t","ts":${us(d.timestampNs)},"pid":${this.pid},"tid":${this.tid(d.threadId)},"args":{"count":${d.count},"fromSeq":${d.fromSeq},"toSeq":${d.toSeq}}}`;
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
    this.text += `\n],\n"displayTimeUnit":"ns",\n"metadata":${JSON.stringify(metadata)}}\n`;
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }
}
