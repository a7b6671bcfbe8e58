import { join } from 'node:path';
import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { FieldType } from '../schema/field-type.js';
import { DROP_TABLE, EventTables, type EventTable, TIME_COLUMNS } from './event-tables.js';
import { ExportOutput, FLUSH_BYTES, prepareDirectory } from './export-output.js';
import { OldestEntry } from '../format/oldest-entry.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { hex, TextWriter } from './text-writer.js';

/** Files kept open at once: the least recently written is closed past this, and reopened to append. */
const MAX_OPEN_FILES = 64;
/** A table's buffer to start with, and to go back to after a write that had grown it past its share. */
const TABLE_BUFFER_BYTES = 1024;

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
  readonly path: string;
  text: CsvText;
  /** Whether the file exists: the first write creates it, later ones append. */
  created: boolean;
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
 *
 * Bounded whatever the number of types: rows wait in a small buffer per table, and once FLUSH_BYTES
 * wait in all, the fullest tables are written out until half that is left; at most MAX_OPEN_FILES
 * files are open, the least recently written closed and reopened to append when needed again.
 */
export class CsvWriter implements ExportWriter {
  private readonly tables = new EventTables();
  private readonly byTable = new Map<EventTable, { file: CsvFile; row: RowWriter }>();
  private readonly files: CsvFile[] = [];
  private readonly open = new Map<CsvFile, ExportOutput>();
  private readonly leastRecent = new OldestEntry(this.open);
  private drops: CsvFile | undefined;
  /** Bytes waiting in every table's buffer. */
  private buffered = 0;
  private bytes = 0;
  /** What was written, in order: drops.csv first. */
  readonly written: CsvTable[] = [];

  constructor(private readonly dir: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.drops) {
      await prepareDirectory(this.dir);
      this.drops = this.create(DROP_TABLE.name, DROP_TABLE.columns, undefined);
    }
    const drops = this.drops.text;
    const before = drops.pos;
    for (const d of batch.drops) dropRow(drops, d);
    this.buffered += drops.pos - before;
    for (const e of batch.events) {
      const [table, fresh] = this.tables.tableOf(e.type);
      if (fresh) this.byTable.set(table, { file: this.create(table.name, [...TIME_COLUMNS, ...table.columns.map((c) => c.column)], table), row: rowWriter(table) });
      const { file, row } = this.byTable.get(table)!;
      const text = file.text;
      const at = text.pos;
      row(text, e);
      this.buffered += text.pos - at;
    }
    if (this.buffered >= FLUSH_BYTES) {
      // The fullest first, so each write is as large as it can be.
      const waiting = this.files.filter((f) => f.text.pos > 0).sort((a, b) => b.text.pos - a.text.pos);
      for (const f of waiting) {
        if (this.buffered <= FLUSH_BYTES / 2) break;
        await this.writeOut(f);
      }
    }
  }

  /** A table's file, its header row waiting in its buffer: the file is made at its first write. */
  private create(name: string, columns: readonly string[], table: EventTable | undefined): CsvFile {
    const file = `${name}.csv`;
    const f: CsvFile = { path: join(this.dir, file), text: new CsvText(TABLE_BUFFER_BYTES), created: false };
    columns.forEach((c, i) => {
      if (i) f.text.ascii(',');
      if (/[",\r\n]/.test(c)) f.text.quoted(c);
      else f.text.utf8(c);
    });
    f.text.ascii('\n');
    this.buffered += f.text.pos;
    this.files.push(f);
    this.written.push({ file, table });
    return f;
  }

  /** Writes out what waits in `f`'s buffer, opening the file (and closing the least recently written past MAX_OPEN_FILES). */
  private async writeOut(f: CsvFile): Promise<void> {
    let out = this.open.get(f);
    if (out) this.open.delete(f);
    else {
      if (this.open.size >= MAX_OPEN_FILES) await this.leastRecent.take()![1].close();
      out = f.created ? await ExportOutput.append(f.path) : await ExportOutput.createNew(f.path);
      f.created = true;
    }
    // Last in the map: the most recently written.
    this.open.set(f, out);
    const text = f.text;
    await out.write(text.buf.subarray(0, text.pos));
    this.buffered -= text.pos;
    this.bytes += text.pos;
    text.pos = 0;
    // A buffer grown past its share of the budget starts small again (with few tables, it is kept).
    if (text.buf.length > Math.max(TABLE_BUFFER_BYTES, (2 * FLUSH_BYTES) / this.files.length)) f.text = new CsvText(TABLE_BUFFER_BYTES);
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    for (const f of this.files) if (f.text.pos > 0) await this.writeOut(f);
    await this.closeAll();
    return { path: this.dir, files: this.files.length, bytes: this.bytes };
  }

  async abort(): Promise<void> {
    await this.closeAll();
  }

  private async closeAll(): Promise<void> {
    for (let e = this.leastRecent.take(); e; e = this.leastRecent.take()) await e[1].close();
  }
}

function dropRow(w: CsvText, d: PlacedDrop): void {
  w.ascii(`${d.timestampNs},${d.threadId},${d.fromSeq},${d.toSeq},${d.count}\n`);
}
