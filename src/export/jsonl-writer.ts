import type { BlockEvent } from '../format/events-block.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { dumpJsonValue } from './json-text.js';

interface LineView {
  /** `{"provider":…,"name":…,"id":…,"version":…,"level":…,"timestampNs":` */
  readonly head: string;
  /** Each field's key and its `"key":`, in the decoded object's own order (what dump shows). */
  readonly keys: ReadonlyArray<readonly [string, string]>;
}

/**
 * One JSON object per line, the same text `tracepipe dump --format jsonl` prints, in timestamp order.
 * Losses are lines of the same shape, from provider `tracepipe`, event `Dropped` (fields count,
 * fromSeq, toSeq; its sequence is the first lost one), placed just before the event that revealed them.
 */
export class JsonlWriter implements ExportWriter {
  readonly order = 'timestamp';
  private out: ExportOutput | undefined;
  private text = '';
  private readonly lines = new Map<StreamEventType, LineView>();
  /** Losses not yet written, by timestamp: they are known before the reorder window lets their events out. */
  private drops: PlacedDrop[] = [];

  constructor(private readonly path: string) {}

  async write(batch: EventBatch): Promise<void> {
    this.out ??= await ExportOutput.create(this.path);
    if (batch.drops.length > 0) {
      this.drops.push(...batch.drops);
      this.drops.sort((a, b) => a.timestampNs - b.timestampNs);
    }
    for (const e of batch.events) {
      if (this.drops.length > 0 && this.drops[0]!.timestampNs <= e.timestampNs) this.dropsUpTo(e.timestampNs);
      this.text += this.line(e);
    }
    if (this.text.length >= FLUSH_BYTES) await this.flush();
  }

  private line(e: BlockEvent): string {
    let v = this.lines.get(e.type);
    if (!v) {
      const d = e.type.descriptor;
      v = {
        head: `{"provider":${JSON.stringify(d.provider)},"name":${JSON.stringify(d.name)},"id":${d.id},"version":${d.version},"level":${d.level},"timestampNs":`,
        keys: Object.keys(e.fields).map((k) => [k, `${JSON.stringify(k)}:`] as const),
      };
      this.lines.set(e.type, v);
    }
    const f = e.fields;
    let fields = '';
    for (const [k, prefix] of v.keys) fields += `${fields ? ',' : ''}${prefix}${dumpJsonValue(f[k]!)}`;
    return `${v.head}${e.timestampNs},"threadId":${e.threadId},"sequence":${e.sequence},"fields":{${fields}}}\n`;
  }

  private dropsUpTo(timestampNs: number): void {
    let n = 0;
    for (; n < this.drops.length && this.drops[n]!.timestampNs <= timestampNs; n++) {
      const d = this.drops[n]!;
      this.text +=
        `{"provider":"tracepipe","name":"Dropped","id":0,"version":0,"level":0,"timestampNs":${d.timestampNs},"threadId":${d.threadId},` +
        `"sequence":${d.fromSeq},"fields":{"count":${d.count},"fromSeq":${d.fromSeq},"toSeq":${d.toSeq}}}\n`;
    }
    this.drops.splice(0, n);
  }

  private async flush(): Promise<void> {
    const text = this.text;
    this.text = '';
    await this.out!.write(text);
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    this.dropsUpTo(Infinity);
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }
}
