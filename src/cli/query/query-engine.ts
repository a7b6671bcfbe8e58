/**
 * What `tracepipe query` asks of its SQL engine. @tracepipe/analyze implements it over DuckDB
 * (importing these types from tracepipe/export); the CLI formats what it returns.
 */

/** A value as a query returns it: 64-bit and wider integers as bigints (exact), BLOBs as bytes, lists as arrays, every other type as DuckDB prints it. */
export type QueryValue = null | boolean | number | bigint | string | Uint8Array | readonly QueryValue[];

export interface QueryColumn {
  readonly name: string;
  /** DuckDB's name of the type: UBIGINT, VARCHAR, … */
  readonly type: string;
}

/** The rows of one statement, streamed: chunks of rows, each row one value per column. */
export interface QueryResult {
  readonly columns: readonly QueryColumn[];
  readonly chunks: AsyncIterable<ReadonlyArray<readonly QueryValue[]>>;
}

export interface TableSchema {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly rows: number;
  readonly columns: readonly QueryColumn[];
}

/** One trace file as it was loaded. */
export interface LoadedTrace {
  readonly file: string;
  readonly events: number;
  readonly dropped: number;
  readonly dropRanges: number;
  /** Where a damaged file broke: its tables hold every intact event. */
  readonly damage?: string;
}

export interface LoadProgress {
  readonly file: string;
  readonly events: number;
  readonly bytesIn: number;
}

/** Trace files loaded into tables: one per event type ("Provider/Event"), `events`, `drops`, `threads`, `header`. */
export interface TraceDatabase {
  readonly traces: readonly LoadedTrace[];
  /** Runs each statement of `sql` in turn and yields the result of each that returns rows; rejects with a SqlError when DuckDB refuses one. */
  query(sql: string): AsyncIterable<QueryResult>;
  /** Every table and view (those the user made too), with columns and row counts. */
  schema(): Promise<TableSchema[]>;
  /** Stops the statement running now (Ctrl-C at the prompt). */
  interrupt(): void;
  /** Closes the engine and removes its files. */
  close(): Promise<void>;
}

/** DuckDB refused a statement: its message, on one line. */
export class SqlError extends Error {
  override readonly name = 'SqlError';
}

/** By name, not class: the engine's package may carry its own copy of tracepipe. */
export const isSqlError = (e: unknown): e is SqlError => e instanceof Error && e.name === 'SqlError';
