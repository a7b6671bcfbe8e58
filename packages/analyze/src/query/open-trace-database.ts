import type { LoadProgress, TraceDatabase } from 'tracepipe/export';

/**
 * `tracepipe query`'s engine. Its modules import DuckDB, whose native library costs memory once
 * loaded: they load when a query is asked for, never when the package is loaded for another command.
 */
export async function openTraceDatabase(files: readonly string[], onProgress?: (p: LoadProgress) => void): Promise<TraceDatabase> {
  const { loadTraceDatabase } = await import('./trace-database.js');
  return loadTraceDatabase(files, onProgress);
}
