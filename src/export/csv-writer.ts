import { join } from 'node:path';
import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { FieldType } from '../schema/field-type.js';
import { DROP_TABLE, EventTables, type EventTable, TIME_COLUMNS } from './event-tables.js';
import { ExportOutput, FLUSH_BYTES, prepareDirectory } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { hex, TextWriter } from './text-writer.js';

/** A table's rows go out once they pass this size. */
const TABLE_FLUSH_BYTES = 256 << 10;

/** CSV text: RFC 4180 quoting, and numbers exactly as JavaScript prints them (NaN, Infinity and -0 included). */
export class CsvText extends TextWriter {
  /** Strings are always quoted, so an empty string is never read back as a missing value. */
  quoted(s: string): void {
    this.ascii('"');
    this.utf8(s.includes('"') ? s.replaceAll('"', '""') : s);
    this.ascii('"');
  }

  number(n: number): void {
    if (Object.is(n, -0)) this.ascii('-0');
    else this.double(n);
  }
}

function cell(type: FieldType, v: string): string {
  switch (type) {
    case 'bool': return `w.ascii(${v} ? 'true' : 'false')`;
    case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32': return `w.integer(${v})`;
    case 'f32': case 'f64': return `w.number(${v})`;
    case 'u64': case 'i64': return `w.ascii(String(${v}))`;
    case 'string': return `w.quoted(${v})`;
    case 'bytes': return `w.quoted(hex(${v}))`;
  }
}

/** cell's code, run: for a process that may not compile code from strings (code-generation.ts). */
function writeCell(w: CsvText, type: FieldType, v: DecodedFields[string]): void {
  switch (type) {
    case 'bool': return w.ascii(v ? 'true' : 'false');
    case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32': return w.integer(v as number);
    case 'f32': case 'f64': return w.number(v as number);
    case 'u64': case 'i64': return w.ascii(String(v));
    case 'string': return w.quoted(v as string);
    case 'bytes': return w.quoted(hex(v as Uint8Array));
  }
}

type RowWriter = (w: CsvText, e: BlockEvent) => void;

/** A table's row writer: the time columns, then each field by a constant key and its type's method; generated where the process allows. */
function rowWriter(table: EventTable): RowWriter {
  if (!codeGenerationAllowed) {
    return (w, e) => {
      w.ascii(String(e.timestampNs)); w.ascii(','); w.integer(e.threadId); w.ascii(','); w.ascii(String(e.sequence));
      for (const c of table.columns) {
        w.ascii(',');
        writeCell(w, c.field.type, e.fields[c.field.name]!);
      }
      w.ascii('\n');
    };
  }
  const cells = table.columns.map((c) => `w.ascii(','); ${cell(c.field.type, `f[${JSON.stringify(c.field.name)}]`)};`);
  const src = `return function writeRow(w, e) {
  w.ascii(String(e.timestampNs)); w.ascii(','); w.integer(e.threadId); w.ascii(','); w.ascii(String(e.sequence));
  const f = e.fields;
  ${cells.join('\n  ')}
  w.ascii('\\n');
};`;
  return new Function('hex', src)(hex) as RowWriter;
}

/** One CSV file and its rows not yet written. */
interface CsvFile {
  readonly out: ExportOutput;
  readonly text: CsvText;
}

/** A table's file name and columns, for readers of the directory (e.g. the Parquet writer's import). */
export interface CsvTable {
  readonly file: string;
  /** Undefined for drops.csv. */
  readonly table: EventTable | undefined;
}

/**
 * One CSV file per event type in a directory (`Provider.Event.csv`, header
 * `timestamp_ns,thread_id,sequence,<fields>`), and `drops.csv` (`timestamp_ns,thread_id,
 * from_sequence,to_sequence,count`). Rows are in stream order (per thread, sequence order). Numbers
 * as JavaScript prints them (NaN and Infinity included, doubles round-trip exactly), 64-bit integers
 * exact, booleans true/false, strings always quoted, bytes as quoted hex.
 */
export class CsvWriter implements ExportWriter {
  private readonly tables = new EventTables();
  private readonly byTable = new Map<EventTable, { file: CsvFile; row: RowWriter }>();
  private readonly files: CsvFile[] = [];
  private drops: CsvFile | undefined;
  /** What was written, in order: drops.csv first. */
  readonly written: CsvTable[] = [];

  constructor(private readonly dir: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.drops) {
      await prepareDirectory(this.dir);
      this.drops = await this.create(DROP_TABLE.name, DROP_TABLE.columns, undefined);
    }
    for (const d of batch.drops) dropRow(this.drops.text, d);
    for (const e of batch.events) {
      const [table, fresh] = this.tables.tableOf(e.type);
      if (fresh) this.byTable.set(table, { file: await this.create(table.name, [...TIME_COLUMNS, ...table.columns.map((c) => c.column)], table), row: rowWriter(table) });
      const t = this.byTable.get(table)!;
      t.row(t.file.text, e);
    }
    let buffered = 0;
    for (const f of this.files) buffered += f.text.pos;
    if (buffered >= FLUSH_BYTES) await this.flushAll(TABLE_FLUSH_BYTES);
  }

  private async create(name: string, columns: readonly string[], table: EventTable | undefined): Promise<CsvFile> {
    const file = `${name}.csv`;
    const f: CsvFile = { out: await ExportOutput.createNew(join(this.dir, file)), text: new CsvText(64 << 10) };
    columns.forEach((c, i) => {
      if (i) f.text.ascii(',');
      if (/[",\r\n]/.test(c)) f.text.quoted(c);
      else f.text.utf8(c);
    });
    f.text.ascii('\n');
    this.files.push(f);
    this.written.push({ file, table });
    return f;
  }

  /** Writes out every file holding at least `min` bytes. */
  private async flushAll(min: number): Promise<void> {
    for (const f of this.files) {
      if (f.text.pos === 0 || f.text.pos < min) continue;
      await f.out.write(f.text.buf.subarray(0, f.text.pos));
      f.text.pos = 0;
    }
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    await this.flushAll(0);
    let bytes = 0;
    for (const f of this.files) {
      await f.out.close();
      bytes += f.out.bytes;
    }
    return { path: this.dir, files: this.files.length, bytes };
  }

  async abort(): Promise<void> {
    for (const f of this.files) await f.out.close();
  }
}

function dropRow(w: CsvText, d: PlacedDrop): void {
  w.ascii(`${d.timestampNs},${d.threadId},${d.fromSeq},${d.toSeq},${d.count}\n`);
}
