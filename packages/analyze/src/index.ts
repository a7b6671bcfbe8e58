// @tracepipe/analyze: re-exports only. The tracepipe CLI loads this package lazily (AnalyzeModule).
import type { AnalyzeModule } from 'tracepipe/export';
import { createParquetWriter } from './parquet-export.js';

export { createParquetWriter, ParquetWriter } from './parquet-export.js';
export { openDuckDB, type DuckDBEngine, type EngineOptions } from './duckdb-engine.js';

// The CLI's contract, checked at build time.
({ createParquetWriter }) satisfies AnalyzeModule;
