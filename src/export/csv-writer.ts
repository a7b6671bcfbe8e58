import { join } from 'node:path';
import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { DROP_TABLE, EventTables, type EventTable, TIME_COLUMNS } from './event-tables.js';
import { ExportOutput, FLUSH_BYTES, prepareDirectory } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { hex } from './json-text.js';

/** A table's buffered rows go out once they pass this size. */
const TABLE_FLUSH_BYTES = 256 << 10;

/** RFC 4180 quoting; strings are always quoted, so an empty string is never read back as a missing value. */
const quote = (s: string): string => `"${s.replaceAll('"', '""')}"`;
const header = (columns: readonly string[]): string => `${columns.map((c) => (/[",\r\n]/.test(c) ? quote(c) : c)).join(',')}\n`;

function cell(v: DecodedFields[string]): string {
  switch (typeof v) {
    case 'string': return quote(v);
    case 'boolean': return v ? 'true' : 'false';
    case 'number': case 'bigint': return String(v);
    default: return quote(hex(v));
  }
}

/** One CSV file and its rows not yet written. */
interface CsvFile {
  readonly out: ExportOutput;
  text: string;
}

/**
 * One CSV file per event type in a directory (`Provider.Event.csv`, header
 * `timestamp_ns,thread_id,sequence,<fields>`), and `drops.csv` (`timestamp_ns,thread_id,
 * from_sequence,to_sequence,count`). Rows are in stream order (per thread, sequence order): nothing is
 * held back. Numbers as written by JavaScript (NaN and Infinity included), 64-bit integers exact,
 * booleans as true/false, bytes as hex.
 */
export class CsvWriter implements ExportWriter {
  private readonly tables = new EventTables();
  private readonly byTable = new Map<EventTable, CsvFile>();
  private readonly files: CsvFile[] = [];
  private drops: CsvFile | undefined;
  private buffered = 0;

  constructor(private readonly dir: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.drops) {
      await prepareDirectory(this.dir);
      this.drops = await this.create(DROP_TABLE.name, DROP_TABLE.columns);
    }
    for (const d of batch.drops) this.append(this.drops, dropRow(d));
    for (const e of batch.events) {
      const [table, fresh] = this.tables.tableOf(e.type);
      if (fresh) this.byTable.set(table, await this.create(table.name, [...TIME_COLUMNS, ...table.columns.map((c) => c.column)]));
      this.append(this.byTable.get(table)!, row(e, table));
    }
    if (this.buffered >= FLUSH_BYTES) await this.flushAll(TABLE_FLUSH_BYTES);
  }

  private async create(name: string, columns: readonly string[]): Promise<CsvFile> {
    const t: CsvFile = { out: await ExportOutput.create(join(this.dir, `${name}.csv`)), text: header(columns) };
    this.files.push(t);
    this.buffered += t.text.length;
    return t;
  }

  private append(t: CsvFile, line: string): void {
    t.text += line;
    this.buffered += line.length;
  }

  /** Writes out every table holding at least `min` characters. */
  private async flushAll(min: number): Promise<void> {
    for (const t of this.files) {
      if (t.text.length < min || t.text.length === 0) continue;
      const text = t.text;
      this.buffered -= text.length;
      t.text = '';
      await t.out.write(text);
    }
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    await this.flushAll(0);
    let bytes = 0;
    for (const t of this.files) {
      await t.out.close();
      bytes += t.out.bytes;
    }
    return { path: this.dir, files: this.files.length, bytes };
  }

  async abort(): Promise<void> {
    for (const t of this.files) await t.out.close();
  }
}

function row(e: BlockEvent, table: EventTable): string {
  let line = `${e.timestampNs},${e.threadId},${e.sequence}`;
  const f = e.fields;
  for (const c of table.columns) line += `,${cell(f[c.field.name]!)}`;
  return `${line}\n`;
}

const dropRow = (d: PlacedDrop): string => `${d.timestampNs},${d.threadId},${d.fromSeq},${d.toSeq},${d.count}\n`;
