import type { BlockEvent } from '../format/events-block.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { fieldsWriter, type FieldsWriter, JsonWriter } from './json-text.js';
import { utf8 } from './text-writer.js';

interface LineView {
  /** `{"provider":…,"name":…,"id":…,"version":…,"level":…,"timestampNs":` */
  readonly head: Uint8Array;
  readonly fields: FieldsWriter;
}

/**
 * One JSON object per line, the same text `tracepipe dump --format jsonl` prints for each event, in
 * stream order (per thread in sequence order; `dump` is the time-ordered view). Losses are lines of
 * the same shape, from provider `tracepipe`, event `Dropped` (fields count, fromSeq, toSeq; its
 * sequence is the first lost one), just before the event that revealed them.
 */
export class JsonlWriter implements ExportWriter {
  private out: ExportOutput | undefined;
  private readonly w = new JsonWriter(FLUSH_BYTES + (64 << 10));
  private readonly lines = new Map<StreamEventType, LineView>();
  /** Losses not yet written, per thread, until the event that revealed them. */
  private readonly drops = new Map<number, PlacedDrop[]>();

  constructor(private readonly path: string) {}

  async write(batch: EventBatch): Promise<void> {
    this.out ??= await ExportOutput.create(this.path);
    for (const d of batch.drops) {
      const list = this.drops.get(d.threadId);
      if (list) list.push(d);
      else this.drops.set(d.threadId, [d]);
    }
    for (const e of batch.events) {
      if (this.drops.size > 0) this.dropsBefore(e.threadId, e.sequence);
      this.line(e);
    }
    if (this.w.pos >= FLUSH_BYTES) await this.flush();
  }

  private line(e: BlockEvent): void {
    let v = this.lines.get(e.type);
    if (!v) {
      const d = e.type.descriptor;
      v = {
        head: utf8(`{"provider":${JSON.stringify(d.provider)},"name":${JSON.stringify(d.name)},"id":${d.id},"version":${d.version},"level":${d.level},"timestampNs":`),
        // The decoded object's own key order is what dump (JSON.stringify) shows.
        fields: fieldsWriter(Object.keys(e.fields), new Map(e.type.layout.fields.map((f) => [f.name, f.type])), 'string'),
      };
      this.lines.set(e.type, v);
    }
    const w = this.w;
    w.raw(v.head);
    w.ascii(`${e.timestampNs},"threadId":${e.threadId},"sequence":${e.sequence},"fields":{`);
    v.fields(w, e.fields);
    w.ascii('}}\n');
  }

  /** Writes the thread's losses that come before `sequence`. */
  private dropsBefore(threadId: number, sequence: number): void {
    const list = this.drops.get(threadId);
    if (!list) return;
    let n = 0;
    for (; n < list.length && list[n]!.toSeq < sequence; n++) {
      const d = list[n]!;
      this.w.ascii(
        `{"provider":"tracepipe","name":"Dropped","id":0,"version":0,"level":0,"timestampNs":${d.timestampNs},"threadId":${d.threadId},` +
          `"sequence":${d.fromSeq},"fields":{"count":${d.count},"fromSeq":${d.fromSeq},"toSeq":${d.toSeq}}}\n`,
      );
    }
    if (n === list.length) this.drops.delete(threadId);
    else list.splice(0, n);
  }

  private async flush(): Promise<void> {
    await this.out!.write(this.w.buf.subarray(0, this.w.pos));
    this.w.pos = 0;
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    for (const threadId of [...this.drops.keys()]) this.dropsBefore(threadId, Infinity);
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }
}
