import type { ExportFiles, ExportWriter } from '../export/export-writer.js';
import { CliError } from './cli-error.js';
import type { LoadProgress, TraceDatabase } from './query/query-engine.js';
import type { ReportPageData } from './report/report-page-data.js';

/** The package that holds what needs a third-party engine (DuckDB); the CLI loads it only when asked. */
export const ANALYZE_PACKAGE = '@tracepipe/analyze';

/**
 * What @tracepipe/analyze gives the CLI. The package implements this interface (importing it from
 * tracepipe/export); tracepipe never imports the package at build time, so it keeps no dependencies.
 */
export interface AnalyzeModule {
  /**
   * `convert --to parquet`, its streaming stage: the rows, staged in `dir` as exact CSV. Its files
   * carry in `pending` what finishParquet needs.
   */
  createParquetWriter(dir: string): ExportWriter;
  /** Its engine stage: DuckDB turns the staged tables into one Parquet file per event type, and drops.parquet. */
  finishParquet(staged: ExportFiles): Promise<ExportFiles>;
  /**
   * `tracepipe query`: the trace files streamed into DuckDB tables (one file: its tables; several:
   * the same tables with a `file` column), ready for SQL.
   */
  openTraceDatabase(files: readonly string[], onProgress?: (p: LoadProgress) => void): Promise<TraceDatabase>;
  /** `tracepipe report --html`: one self-contained page (the chart library, its styles and the data inlined). */
  renderReportPage(data: ReportPageData): Promise<string>;
}

/** Loads @tracepipe/analyze for `feature` (e.g. "tracepipe convert --to parquet"), or says in one line what to install. */
export async function loadAnalyze(feature: string): Promise<AnalyzeModule> {
  // A variable specifier: TypeScript must not resolve (or require) the package at build time.
  const specifier: string = ANALYZE_PACKAGE;
  try {
    return (await import(specifier)) as AnalyzeModule;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    if (err.message.includes(`'${ANALYZE_PACKAGE}'`)) throw new CliError(`${feature} needs the ${ANALYZE_PACKAGE} package: npm install ${ANALYZE_PACKAGE}`);
    throw new CliError(`${ANALYZE_PACKAGE} is installed but cannot load (${err.message.split('\n')[0]}); reinstall it: npm install ${ANALYZE_PACKAGE}`);
  }
}
