// @tracepipe/analyze: re-exports only. The tracepipe CLI loads this package lazily (AnalyzeModule).
import type { AnalyzeModule } from 'tracepipe/export';
import { createParquetWriter, finishParquet } from './parquet-export.js';
import { openTraceDatabase } from './query/open-trace-database.js';
import { renderReportPage } from './report/report-page.js';

export { createParquetWriter, finishParquet, ParquetWriter } from './parquet-export.js';
export { openDuckDB, type DuckDBEngine, type EngineOptions } from './duckdb-engine.js';
export { openTraceDatabase } from './query/open-trace-database.js';
export { renderReportPage } from './report/report-page.js';

// The CLI's contract, checked at build time.
({ createParquetWriter, finishParquet, openTraceDatabase, renderReportPage }) satisfies AnalyzeModule;
