import { type DuckDBAppender, DuckDBDataChunk, type DuckDBVector } from '@duckdb/node-api';

/** Writes one cell of row `row` from its source (an event, a drop); `file` is the trace file the source came from. */
export type CellSetter<T> = (vector: DuckDBVector, row: number, source: T, file: string) => void;

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/**
 * Rows into a DuckDB table through its appender, a data chunk at a time: each cell goes into the
 * chunk's column buffers (typed arrays for numbers), and DuckDB takes 2,048 rows per call. Nothing
 * is kept per row once its chunk is appended, so memory stays flat whatever the row count.
 */
export class ChunkAppender<T> {
  private readonly chunk: DuckDBDataChunk;
  private vectors: DuckDBVector[];
  private row = 0;
  /** Rows appended so far. */
  rows = 0;

  constructor(
    private readonly appender: DuckDBAppender,
    private readonly setters: ReadonlyArray<CellSetter<T>>,
  ) {
    if (appender.columnCount !== setters.length) throw new Error(`appender has ${appender.columnCount} columns, ${setters.length} setters given`);
    this.chunk = DuckDBDataChunk.create(setters.map((_, i) => appender.columnType(i)), CHUNK_ROWS);
    this.vectors = this.columnVectors();
  }

  private columnVectors(): DuckDBVector[] {
    return this.setters.map((_, i) => this.chunk.getColumnVector(i));
  }

  append(source: T, file: string): void {
    const { setters, vectors, row } = this;
    for (let c = 0; c < setters.length; c++) setters[c]!(vectors[c]!, row, source, file);
    this.rows++;
    if (++this.row === CHUNK_ROWS) this.flush();
  }

  private flush(): void {
    if (this.row === 0) return;
    for (const v of this.vectors) v.flush();
    // Setting the row count drops the chunk's vector objects, so it comes after their flush.
    this.chunk.rowCount = this.row;
    this.appender.appendDataChunk(this.chunk);
    this.chunk.reset();
    this.chunk.rowCount = CHUNK_ROWS;
    this.vectors = this.columnVectors();
    this.row = 0;
  }

  /** Appends what is left and closes the appender: the rows are in the table. */
  close(): void {
    this.flush();
    this.appender.flushSync();
    this.appender.closeSync();
  }
}
