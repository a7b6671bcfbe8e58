import { blobValue, type DuckDBAppender, type DuckDBConnection, listValue, type DuckDBValue } from '@duckdb/node-api';
import {
  type BlockEvent,
  columnSafe,
  type EventBatch,
  type EventTable,
  EventTables,
  type ExportEnd,
  type ExportFiles,
  type ExportWriter,
  type FieldType,
  isThreadInfo,
  type LoadedTrace,
  nameKey,
  type PlacedDrop,
  type StreamEventType,
  ThreadNames,
  TIME_COLUMNS,
  type TraceHeader,
} from 'tracepipe/export';
import { ident, literal } from '../duckdb-engine.js';
import { SQL_TYPE, TIME_TYPES } from '../sql-types.js';
import { type CellSetter, ChunkAppender } from './chunk-appender.js';

/** A column of one of the fixed tables: its name, type and how a row's value is read from its source. */
type Column<T> = readonly [name: string, type: string, value: (source: T) => DuckDBValue];

/** One row per loss (a range of sequence numbers that never arrived), placed at the event that revealed it. */
const DROP_COLUMNS: ReadonlyArray<Column<PlacedDrop>> = [
  ['timestamp_ns', 'BIGINT', (d) => BigInt(d.timestampNs)],
  ['thread_id', 'UINTEGER', (d) => d.threadId],
  ['first_seq', 'UBIGINT', (d) => BigInt(d.fromSeq)],
  ['last_seq', 'UBIGINT', (d) => BigInt(d.toSeq)],
  ['count', 'UBIGINT', (d) => BigInt(d.count)],
];

interface ThreadRow {
  readonly threadId: number;
  role: string | null;
  events: number;
  dropped: number;
  name: string;
}

const THREAD_COLUMNS: ReadonlyArray<Column<ThreadRow>> = [
  ['thread_id', 'UINTEGER', (t) => t.threadId],
  // As every timeline names it: main, worker N, tracepipe's own threads marked (from the process rundown).
  ['name', 'VARCHAR', (t) => t.name],
  // From the rundown (Runtime.Process/Thread): main, worker, tracepipe-drain, tracepipe-watchdog; NULL when none described the thread.
  ['role', 'VARCHAR', (t) => t.role],
  ['events', 'UBIGINT', (t) => BigInt(t.events)],
  ['dropped', 'UBIGINT', (t) => BigInt(t.dropped)],
];

/** An integer written as decimal digits (the header's clock), or NULL if it is not one. */
const digits = (s: string): bigint | null => (/^\d{1,20}$/.test(s) && BigInt(s) < 2n ** 64n ? BigInt(s) : null);

interface HeaderRow {
  readonly header: TraceHeader;
  readonly end: ExportEnd;
}

const HEADER_COLUMNS: ReadonlyArray<Column<HeaderRow>> = [
  ['format_version', 'VARCHAR', ({ header: h }) => `${h.formatMajor}.${h.formatMinor}`],
  ['pid', 'UINTEGER', ({ header: h }) => h.pid],
  ['process_title', 'VARCHAR', ({ header: h }) => h.processTitle],
  ['argv', 'VARCHAR[]', ({ header: h }) => listValue(h.argv)],
  ['exec_argv', 'VARCHAR[]', ({ header: h }) => listValue(h.execArgv)],
  ['node_version', 'VARCHAR', ({ header: h }) => h.nodeVersion],
  ['tracepipe_version', 'VARCHAR', ({ header: h }) => h.tracepipeVersion],
  ['platform', 'VARCHAR', ({ header: h }) => h.platform],
  ['arch', 'VARCHAR', ({ header: h }) => h.arch],
  ['hostname', 'VARCHAR', ({ header: h }) => h.hostname],
  // Wall clock (ns since the Unix epoch) at the trace origin: wall time of an event = wall_clock_ns + timestamp_ns.
  ['wall_clock_ns', 'UBIGINT', ({ header: h }) => digits(h.clock.wallClockNs)],
  ['monotonic_ns', 'UBIGINT', ({ header: h }) => digits(h.clock.monotonicNs)],
  ['session_id', 'UINTEGER', ({ header: h }) => h.session.id],
  ['providers', 'VARCHAR', ({ header: h }) => h.session.providers],
  ['buffering_mode', 'VARCHAR', ({ header: h }) => h.session.bufferingMode],
  ['buffer_size_mb', 'DOUBLE', ({ header: h }) => h.session.bufferSizeMB],
  ['events', 'UBIGINT', ({ end }) => BigInt(end.events)],
  ['dropped', 'UBIGINT', ({ end }) => BigInt(end.dropped)],
  // Where a damaged file broke (its tables hold every intact event); NULL for an intact one.
  ['damage', 'VARCHAR', ({ end }) => end.damage ?? null],
];

/** Where a field's value goes: one setter per field type, reading the field by its name. */
function fieldSetter(name: string, type: FieldType): CellSetter<BlockEvent> {
  if (type === 'bytes') return (v, r, e) => v.setItem(r, blobValue(e.fields[name] as Uint8Array));
  return (v, r, e) => v.setItem(r, e.fields[name] as DuckDBValue);
}

const fileSetter: CellSetter<unknown> = (v, r, _s, file) => v.setItem(r, file);

/** An event table: its SQL name, how its cells are set, and its appender while one is open. */
interface TableTarget {
  readonly sqlName: string;
  readonly setters: ReadonlyArray<CellSetter<BlockEvent>>;
  rows: ChunkAppender<BlockEvent> | undefined;
}

/** An event type's table and what else its events tell the loader. */
interface TypeTarget {
  readonly table: TableTarget;
  readonly threadInfo: boolean;
}

/**
 * Event tables with an appender open at once. Each holds a data chunk and DuckDB's rows not yet in
 * its table: one per table, 8,000 event types exhausted DuckDB's 512 MB buffer pool. Past this, the
 * least recently used is closed (its rows go into the table) and opened again when needed.
 */
const MAX_OPEN_APPENDERS = 32;
/**
 * Tables made between checkpoints. DuckDB holds a new table's rows in memory it cannot evict until a
 * checkpoint writes them to the database file (~90 KB for a table of one row): 8,000 event types
 * filled its buffer pool and the load failed. Checkpointing as tables accumulate lets it evict them.
 */
const TABLES_PER_CHECKPOINT = 256;

/** A table's SQL name, unique as DuckDB compares them (nameKey): "Provider/Event", then "Provider/Event-2" for another layout. */
function uniqueName(key: string, taken: Set<string>): string {
  const base = columnSafe(key);
  let name = base;
  for (let n = 2; taken.has(nameKey(name)); n++) name = `${base}-${n}`;
  taken.add(nameKey(name));
  return name;
}

/**
 * Fills the tables of `tracepipe query` from one or more traces: one table per event type
 * ("Provider/Event": timestamp_ns, thread_id, sequence as in the CSV and Parquet exports, then each
 * field with its type), `drops`, `threads`, `header`, and the view `events`. With several files every
 * table starts with a `file` column. Each trace streams through `writerFor(file)` (an ExportWriter:
 * convertTrace drives it), its rows going into DuckDB a chunk at a time.
 */
export class TraceTables {
  /** With several files, a field's column is never `file`. */
  private readonly tables: EventTables;
  private readonly targets = new Map<StreamEventType, TypeTarget>();
  private readonly byTable = new Map<EventTable, TableTarget>();
  /** Tables with an open appender, the least recently used first. */
  private readonly open = new Set<TableTarget>();
  /** Event tables in the order they were made, by SQL name. */
  private readonly eventTables: Array<{ readonly sqlName: string; readonly key: string }> = [];
  private readonly taken = new Set<string>(['events', 'drops', 'threads', 'header']);
  private drops: ChunkAppender<PlacedDrop> | undefined;
  private headers: DuckDBAppender | undefined;
  private readonly threadRows: ThreadRow[] = [];
  private readonly threadFiles: string[] = [];
  readonly loaded: LoadedTrace[] = [];

  private constructor(
    private readonly connection: DuckDBConnection,
    private readonly multiFile: boolean,
  ) {
    this.tables = new EventTables(multiFile ? ['file'] : []);
  }

  static async create(connection: DuckDBConnection, multiFile: boolean): Promise<TraceTables> {
    const t = new TraceTables(connection, multiFile);
    t.drops = await t.fixedTable('drops', DROP_COLUMNS);
    await connection.run(`CREATE TABLE header (${t.columnsSql(HEADER_COLUMNS.map(([n, type]) => [n, type]))})`);
    // One row per file, appended row by row: DuckDB's data chunks do not take lists (argv) from JavaScript.
    t.headers = await connection.createAppender('header');
    return t;
  }

  /** `file` first when there are several files, then `columns`. */
  private columnsSql(columns: ReadonlyArray<readonly [string, string]>): string {
    return [...(this.multiFile ? [['file', 'VARCHAR']] : []), ...columns].map(([n, type]) => `${ident(n!)} ${type}`).join(', ');
  }

  private withFile<T>(setters: Array<CellSetter<T>>): Array<CellSetter<T>> {
    return this.multiFile ? [fileSetter, ...setters] : setters;
  }

  private async fixedTable<T>(name: string, columns: ReadonlyArray<Column<T>>): Promise<ChunkAppender<T>> {
    await this.connection.run(`CREATE TABLE ${ident(name)} (${this.columnsSql(columns.map(([n, type]) => [n, type]))})`);
    const setters = columns.map(([, , value]): CellSetter<T> => (v, r, s) => v.setItem(r, value(s)));
    return new ChunkAppender(await this.connection.createAppender(name), this.withFile(setters));
  }

  private async targetOf(t: StreamEventType): Promise<TypeTarget> {
    const [table, fresh] = this.tables.tableOf(t);
    let target = fresh ? undefined : this.byTable.get(table);
    if (!target) {
      const sqlName = uniqueName(table.key, this.taken);
      const columns = [...TIME_COLUMNS.map((n, i) => [n, TIME_TYPES[i]!] as const), ...table.columns.map((c) => [c.column, SQL_TYPE[c.field.type]] as const)];
      await this.connection.run(`CREATE TABLE ${ident(sqlName)} (${this.columnsSql(columns)})`);
      const setters: Array<CellSetter<BlockEvent>> = [
        (v, r, e) => v.setItem(r, BigInt(e.timestampNs)),
        (v, r, e) => v.setItem(r, e.threadId),
        (v, r, e) => v.setItem(r, BigInt(e.sequence)),
        ...table.columns.map((c) => fieldSetter(c.field.name, c.field.type)),
      ];
      target = { sqlName, setters: this.withFile(setters), rows: undefined };
      this.byTable.set(table, target);
      this.eventTables.push({ sqlName, key: table.key });
      if (this.eventTables.length % TABLES_PER_CHECKPOINT === 0) await this.checkpoint();
    }
    // Tables are shared by types with the same fields; whether an event describes a thread is the type's own.
    const own: TypeTarget = { table: target, threadInfo: isThreadInfo(t) };
    this.targets.set(t, own);
    return own;
  }

  /** Closes every appender (their rows go into the tables) and writes the tables to the database file. */
  private async checkpoint(): Promise<void> {
    for (const t of this.open) {
      t.rows!.close();
      t.rows = undefined;
    }
    this.open.clear();
    await this.connection.run('CHECKPOINT');
  }

  /** The table's appender, now the most recently used: opened if closed, closing the least recently used past MAX_OPEN_APPENDERS. */
  private async rowsOf(t: TableTarget): Promise<ChunkAppender<BlockEvent>> {
    if (t.rows) {
      this.open.delete(t);
      this.open.add(t);
      return t.rows;
    }
    if (this.open.size >= MAX_OPEN_APPENDERS) {
      // A set this small is compacted as it goes: its first entry is found at once.
      const oldest = this.open.values().next().value!;
      this.open.delete(oldest);
      oldest.rows!.close();
      oldest.rows = undefined;
    }
    t.rows = new ChunkAppender(await this.connection.createAppender(t.sqlName), t.setters);
    this.open.add(t);
    return t.rows;
  }

  /** The writer that streams trace `file` into the tables. */
  writerFor(file: string): ExportWriter {
    const threads = new Map<number, ThreadRow>();
    let names: ThreadNames | undefined;
    const threadOf = (threadId: number): ThreadRow => {
      let t = threads.get(threadId);
      if (!t) threads.set(threadId, (t = { threadId, role: threadId === 0 ? 'main' : null, events: 0, dropped: 0, name: '' }));
      return t;
    };
    return {
      write: async (batch: EventBatch) => {
        names ??= new ThreadNames(batch.header.pid);
        let lastType: StreamEventType | undefined;
        let target: TypeTarget | undefined;
        let rows: ChunkAppender<BlockEvent> | undefined;
        let lastThread = -1;
        let thread: ThreadRow | undefined;
        for (const e of batch.events) {
          if (e.type !== lastType) {
            target = this.targets.get(e.type) ?? (await this.targetOf(e.type));
            rows = await this.rowsOf(target.table);
            lastType = e.type;
          }
          rows!.append(e, file);
          if (e.threadId !== lastThread) {
            thread = threadOf(e.threadId);
            lastThread = e.threadId;
          }
          thread!.events++;
          if (target!.threadInfo) {
            names.observe(e);
            if (typeof e.fields.threadId === 'number' && typeof e.fields.role === 'string') threadOf(e.fields.threadId).role = e.fields.role;
          }
        }
        for (const d of batch.drops) {
          this.drops!.append(d, file);
          threadOf(d.threadId).dropped += d.count;
        }
      },
      finish: async (end: ExportEnd): Promise<ExportFiles> => {
        const h = this.headers!;
        const values = HEADER_COLUMNS.map(([, , value]) => value({ header: end.header, end }));
        (this.multiFile ? [file, ...values] : values).forEach((v, i) => h.appendValue(v, h.columnType(i)));
        h.endRow();
        for (const t of [...threads.values()].sort((a, b) => a.threadId - b.threadId)) {
          t.name = names?.name(t.threadId) ?? '';
          this.threadRows.push(t);
          this.threadFiles.push(file);
        }
        this.loaded.push({ file, events: end.events, dropped: end.dropped, dropRanges: end.dropRanges, ...(end.damage ? { damage: end.damage } : {}) });
        return { path: file, files: 0, bytes: 0 };
      },
      abort: async () => undefined,
    };
  }

  /** Once every file is in: the rows left in the appenders, the `threads` table and the `events` view. */
  async complete(): Promise<void> {
    for (const t of this.open) t.rows!.close();
    this.drops!.close();
    this.headers!.closeSync();
    const threads = await this.fixedTable('threads', THREAD_COLUMNS);
    this.threadRows.forEach((t, i) => threads.append(t, this.threadFiles[i]!));
    threads.close();
    const file = this.multiFile ? 'file, ' : '';
    const selects = this.eventTables.map(({ sqlName, key }) => `SELECT ${file}${literal(key)} AS event, timestamp_ns, thread_id, sequence FROM ${ident(sqlName)}`);
    // With no event at all the view still has its columns (and no rows).
    if (selects.length === 0) selects.push(`SELECT ${this.multiFile ? 'NULL::VARCHAR AS file, ' : ''}NULL::VARCHAR AS event, NULL::BIGINT AS timestamp_ns, NULL::UINTEGER AS thread_id, NULL::UBIGINT AS sequence WHERE false`);
    await this.connection.run(`CREATE VIEW events AS ${selects.join('\nUNION ALL ')}`);
  }
}
