/**
 * `tracepipe/export`: what a package of converters (such as @tracepipe/analyze) builds on. Re-exports
 * only; each concept lives in src/export/ or the layer that owns it.
 */
export { convertTrace, type ConvertProgress, type ConvertResult } from './export/convert-trace.js';
export type { ExportWriter, ExportEnd, ExportFiles } from './export/export-writer.js';
export { EventTables, TIME_COLUMNS, DROP_TABLE, columnSafe, nameKey, type EventTable, type TableColumn } from './export/event-tables.js';
export { prepareDirectory, ExportTargetError } from './export/export-output.js';
export { PRIVATE_FILE_MODE } from './sinks/private-file.js';
export { CsvWriter, type CsvTable } from './export/csv-writer.js';
export type { AnalyzeModule } from './cli/analyze-loader.js';
export { SqlError, type TraceDatabase, type QueryResult, type QueryColumn, type QueryValue, type TableSchema, type LoadedTrace, type LoadProgress } from './cli/query/query-engine.js';
export { ThreadNames, isThreadInfo } from './export/runtime-view.js';
export type { ReportPageData, TimeSeries, CpuFlameData, CpuFlameThread } from './cli/report/report-page-data.js';
export type { TraceReport } from './cli/trace-report.js';
export type { EventBatch, PlacedDrop } from './format/trace-reader.js';
export type { BlockEvent } from './format/events-block.js';
export type { StreamEventType } from './format/trace-event.js';
export type { DecodedFields } from './format/payload-codec.js';
export type { TraceHeader } from './format/stream-header.js';
export type { FieldType } from './schema/field-type.js';
