// @tracepipe/analyze: re-exports only. The tracepipe CLI loads this package lazily (AnalyzeModule).
import type { AnalyzeModule } from 'tracepipe/export';
import { createParquetWriter, finishParquet } from './parquet-export.js';

export { createParquetWriter, finishParquet, ParquetWriter } from './parquet-export.js';
export { openDuckDB, type DuckDBEngine, type EngineOptions } from './duckdb-engine.js';

// The CLI's contract, checked at build time.
({ createParquetWriter, finishParquet }) satisfies AnalyzeModule;
