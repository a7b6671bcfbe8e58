// @tracepipe/analyze: re-exports only. The tracepipe CLI loads this package lazily (AnalyzeModule).
import type { AnalyzeModule } from 'tracepipe/export';
import { createParquetWriter, finishParquet } from './parquet-export.js';
import { openTraceDatabase } from './query/open-trace-database.js';

export { createParquetWriter, finishParquet, ParquetWriter } from './parquet-export.js';
export { openDuckDB, type DuckDBEngine, type EngineOptions } from './duckdb-engine.js';
export { openTraceDatabase } from './query/open-trace-database.js';

// The CLI's contract, checked at build time.
({ createParquetWriter, finishParquet, openTraceDatabase }) satisfies AnalyzeModule;
