import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';

/** A DuckDB that spills to `spillDir` past `memoryLimit`, so its memory stays bounded. */
export interface DuckDBEngine {
  readonly connection: DuckDBConnection;
  close(): Promise<void>;
}

export interface EngineOptions {
  /** Where DuckDB may spill what does not fit; removed on close. */
  readonly spillDir: string;
  /** DuckDB's own memory limit (its default is 80% of RAM). */
  readonly memoryLimit?: string;
  readonly threads?: number;
  /** A database file made in spillDir (and removed with it), for tables larger than memory should hold; in memory without one. */
  readonly databaseFile?: string;
}

/**
 * Opens the engine every tool of this package runs on (convert --to parquet, query).
 * Row order is not preserved by bulk writes: that lets DuckDB stream them instead of buffering.
 */
export async function openDuckDB(options: EngineOptions): Promise<DuckDBEngine> {
  // Loaded when first needed: the engine's native library costs ~25 MB of memory once loaded.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  if (options.databaseFile) await mkdir(options.spillDir, { recursive: true });
  const instance = await DuckDBInstance.create(options.databaseFile ? join(options.spillDir, options.databaseFile) : ':memory:', {
    memory_limit: options.memoryLimit ?? '256MB',
    temp_directory: options.spillDir,
    preserve_insertion_order: 'false',
    threads: String(options.threads ?? 2),
  });
  const connection = await instance.connect();
  return {
    connection,
    async close() {
      connection.closeSync();
      instance.closeSync();
      await rm(options.spillDir, { recursive: true, force: true });
    },
  };
}

/** A SQL identifier, quoted (names in traces are arbitrary strings). */
export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** A SQL string literal; NUL, which would end the statement's text, joined in as chr(0). */
export const literal = (s: string): string =>
  s
    .split('\0')
    .map((part) => `'${part.replaceAll("'", "''")}'`)
    .join(' || chr(0) || ');
