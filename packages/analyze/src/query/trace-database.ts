import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBArrayValue, DuckDBBlobValue, DuckDBListValue, type DuckDBDataChunk, type DuckDBResult, type DuckDBValue, ResultReturnType } from '@duckdb/node-api';
import {
  convertTrace,
  type LoadedTrace,
  type LoadProgress,
  type QueryResult,
  type QueryValue,
  SqlError,
  type TableSchema,
  type TraceDatabase,
} from 'tracepipe/export';
import { type DuckDBEngine, ident, openDuckDB } from '../duckdb-engine.js';
import { TraceTables } from './trace-tables.js';

/**
 * DuckDB's own memory (its buffer pool): with the node process and DuckDB's library, a 10 M-event
 * trace loads and is queried in well under 1 GB. Tables live in a database file in a temporary
 * directory, so what does not fit is read back from disk instead of growing the process.
 */
const MEMORY_LIMIT = '512MB';

/** DuckDB's message on one line: its context lines (LINE 1: …) kept, the caret line under them dropped. */
function sqlError(e: unknown): SqlError {
  const message = e instanceof Error ? e.message : String(e);
  return new SqlError(
    message
      // The client library's wrapping of a parser error, in front of DuckDB's own message.
      .replace(/^Failed to extract statements: /, '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/^\^+$/.test(l))
      .join(' '),
  );
}

/** A value as the CLI prints it: numbers, bigints, strings and booleans as they are, BLOBs as bytes, lists as arrays, any other type as DuckDB writes it. */
function plain(v: DuckDBValue): QueryValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string') return v;
  if (v instanceof DuckDBBlobValue) return v.bytes;
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(plain);
  return String(v);
}

function rowsOf(chunk: DuckDBDataChunk): QueryValue[][] {
  const columns = chunk.getColumns();
  const rows: QueryValue[][] = [];
  for (let r = 0; r < chunk.rowCount; r++) rows.push(columns.map((c) => plain(c[r]!)));
  return rows;
}

async function* chunksOf(result: DuckDBResult): AsyncGenerator<QueryValue[][]> {
  for (;;) {
    let chunk: DuckDBDataChunk | null;
    try {
      chunk = await result.fetchChunk();
    } catch (e) {
      throw sqlError(e);
    }
    if (!chunk || chunk.rowCount === 0) return;
    yield rowsOf(chunk);
  }
}

class DuckDBTraceDatabase implements TraceDatabase {
  constructor(
    private readonly engine: DuckDBEngine,
    readonly traces: readonly LoadedTrace[],
  ) {}

  async *query(sql: string): AsyncGenerator<QueryResult> {
    const { connection } = this.engine;
    let statements;
    try {
      statements = await connection.extractStatements(sql);
    } catch (e) {
      throw sqlError(e);
    }
    for (let i = 0; i < statements.count; i++) {
      let result: DuckDBResult;
      try {
        result = await (await statements.prepare(i)).stream();
      } catch (e) {
        throw sqlError(e);
      }
      // Statements that make or change things (CREATE, INSERT, SET) print nothing, as in DuckDB's own shell.
      if (result.returnType !== ResultReturnType.QUERY_RESULT) continue;
      const types = result.columnTypes();
      yield { columns: result.columnNames().map((name, c) => ({ name, type: types[c]!.toString() })), chunks: chunksOf(result) };
    }
  }

  async schema(): Promise<TableSchema[]> {
    const { connection } = this.engine;
    const rel = await connection.runAndReadAll(
      `SELECT table_name, 'table' AS kind FROM duckdb_tables() WHERE NOT internal AND NOT temporary AND database_name = current_database()
       UNION ALL SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal AND NOT temporary AND database_name = current_database()
       ORDER BY 1`,
    );
    const cols = await connection.runAndReadAll(
      `SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal AND database_name = current_database() ORDER BY table_name, column_index`,
    );
    const byTable = new Map<string, Array<{ name: string; type: string }>>();
    for (const [table, name, type] of cols.getRows()) {
      const list = byTable.get(String(table)) ?? [];
      byTable.set(String(table), list);
      list.push({ name: String(name), type: String(type) });
    }
    const out: TableSchema[] = [];
    for (const [name, kind] of rel.getRows()) {
      const count = await connection.runAndReadAll(`SELECT count(*) FROM ${ident(String(name))}`);
      out.push({ name: String(name), kind: kind === 'view' ? 'view' : 'table', rows: Number(count.getRows()[0]![0]), columns: byTable.get(String(name)) ?? [] });
    }
    return out;
  }

  interrupt(): void {
    this.engine.connection.interrupt();
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/**
 * Streams `files` into a fresh DuckDB database (see TraceTables), in stream order and a data chunk
 * at a time: memory holds one batch of events and DuckDB's buffer pool, whatever the trace size.
 */
export async function loadTraceDatabase(files: readonly string[], onProgress?: (p: LoadProgress) => void): Promise<TraceDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-query-'));
  // The database is scratch: removed on close, and on any exit that skips close (a closed pipe, a signal handler's exit).
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  let engine: DuckDBEngine | undefined;
  try {
    engine = await openDuckDB({ spillDir: dir, databaseFile: 'traces.duckdb', memoryLimit: MEMORY_LIMIT });
    const tables = await TraceTables.create(engine.connection, files.length > 1);
    for (const file of files) await convertTrace(file, tables.writerFor(file), (p) => onProgress?.({ file, events: p.events, bytesIn: p.bytesIn }));
    await tables.complete();
    await engine.connection.run('CHECKPOINT');
    const opened = engine;
    return new DuckDBTraceDatabase({ connection: opened.connection, close: () => opened.close().finally(() => process.off('exit', removeDir)) }, tables.loaded);
  } catch (e) {
    await engine?.close();
    removeDir();
    process.off('exit', removeDir);
    throw e;
  }
}
