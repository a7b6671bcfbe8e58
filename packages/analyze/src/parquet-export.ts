import { chmod, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CsvWriter,
  DROP_TABLE,
  type EventBatch,
  type ExportEnd,
  type ExportFiles,
  type ExportWriter,
  prepareDirectory,
  PRIVATE_FILE_MODE,
  TIME_COLUMNS,
  type TraceHeader,
} from 'tracepipe/export';
import { ident, literal, openDuckDB } from './duckdb-engine.js';
import { SQL_TYPE, TIME_TYPES } from './sql-types.js';

const DROP_TYPES = ['BIGINT', 'UINTEGER', 'UBIGINT', 'UBIGINT', 'UBIGINT'];

/**
 * Where the rows wait, as exact CSV, until DuckDB turns each table into Parquet; a directory only its
 * owner can enter, so DuckDB's own files in it (its Parquet, made with DuckDB's mode, and what it
 * spills) are never readable by others, not even for a moment.
 */
const STAGING = '.csv-staging';
/** One thread, small row groups and a 1 MiB CSV buffer keep DuckDB's memory bounded (~50 MB with its library). */
const ROW_GROUP_SIZE = 16_384;
const CSV_BUFFER = 1 << 20;

/** A staged table: its CSV, and the names and types of its columns. */
interface StagedTable {
  readonly file: string;
  readonly names: readonly string[];
  readonly types: readonly string[];
}

/** What the streaming stage leaves for the engine stage (plain data: it crosses threads). */
interface ParquetPending {
  readonly dir: string;
  readonly header: TraceHeader;
  readonly tables: readonly StagedTable[];
}

/**
 * `tracepipe convert --to parquet`: one Parquet file per event type in a directory
 * (`Provider.Event.parquet`: `timestamp_ns` BIGINT (ns since the trace origin), `thread_id` UINTEGER,
 * `sequence` UBIGINT, then each field with its own type) and `drops.parquet` (`timestamp_ns`,
 * `thread_id`, `from_sequence`, `to_sequence`, `count`). Each file carries the trace header as
 * key-value metadata (`tracepipe.header`: host, pid, wall clock at the origin), so traces from many
 * machines can be told apart and put on one clock.
 *
 * Two stages. This writer streams the rows into exact CSV (tracepipe's own CSV writer: doubles
 * round-trip, 64-bit integers are digits, bytes hex); then finishParquet has DuckDB read each table
 * with its declared types and write it with `COPY … (FORMAT parquet)`. Both stream, so memory stays
 * bounded whatever the trace size, and the CLI runs the second only once the first's thread is gone.
 */
export class ParquetWriter implements ExportWriter {
  private readonly staging: CsvWriter;
  private header: TraceHeader | undefined;

  constructor(private readonly dir: string) {
    this.staging = new CsvWriter(join(dir, STAGING));
  }

  async write(batch: EventBatch): Promise<void> {
    if (!this.header) {
      await prepareDirectory(this.dir);
      this.header = batch.header;
    }
    await this.staging.write(batch);
  }

  async finish(end: ExportEnd): Promise<ExportFiles> {
    const staged = await this.staging.finish(end);
    const tables = this.staging.written.map(({ file, table }): StagedTable => ({
      file,
      names: table ? [...TIME_COLUMNS, ...table.columns.map((c) => c.column)] : [...DROP_TABLE.columns],
      types: table ? [...TIME_TYPES, ...table.columns.map((c) => SQL_TYPE[c.field.type])] : DROP_TYPES,
    }));
    const pending: ParquetPending = { dir: this.dir, header: this.header!, tables };
    return { path: this.dir, files: staged.files, bytes: staged.bytes, pending };
  }

  async abort(): Promise<void> {
    await this.staging.abort();
  }
}

/** The engine stage: DuckDB reads each staged table with its declared types and writes its Parquet file. */
export async function finishParquet(staged: ExportFiles): Promise<ExportFiles> {
  const { dir, header, tables } = staged.pending as ParquetPending;
  const staging = join(dir, STAGING);
  const engine = await openDuckDB({ spillDir: join(staging, '.duckdb-spill'), memoryLimit: '32MB', threads: 1 });
  const metadata = `KV_METADATA { 'tracepipe.header': ${literal(JSON.stringify(header))} }`;
  let bytes = 0;
  try {
    for (const { file, names, types } of tables) {
      // Bytes are hex in the CSV: read as text, turned back into BLOBs.
      const select = names.map((n, i) => (types[i] === 'BLOB' ? `from_hex(${ident(n)}) AS ${ident(n)}` : ident(n))).join(', ');
      const columns = names.map((n, i) => `${literal(n)}: '${types[i] === 'BLOB' ? 'VARCHAR' : types[i]}'`).join(', ');
      const source = `read_csv(${literal(join(staging, file))}, header = true, columns = {${columns}}, quote = '"', escape = '"', allow_quoted_nulls = false, auto_detect = false, buffer_size = ${CSV_BUFFER})`;
      const name = `${file.slice(0, -'.csv'.length)}.parquet`;
      const written = join(staging, name);
      await engine.connection.run(`COPY (SELECT ${select} FROM ${source}) TO ${literal(written)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}, ${metadata})`);
      await chmod(written, PRIVATE_FILE_MODE);
      await rename(written, join(dir, name));
      bytes += (await stat(join(dir, name))).size;
    }
  } finally {
    await engine.close();
    await rm(staging, { recursive: true, force: true });
  }
  return { path: dir, files: tables.length, bytes };
}

/** The writer the CLI asks for (see AnalyzeModule in tracepipe/export). */
export function createParquetWriter(dir: string): ExportWriter {
  return new ParquetWriter(dir);
}
