import { hex } from '../../export/text-writer.js';
import { printable } from '../printable.js';
import type { QueryColumn, QueryResult, QueryValue } from './query-engine.js';

/** The `--format` values (a contract: add, never rename). */
export const QUERY_FORMATS = ['table', 'csv', 'json'] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

export const isQueryFormat = (s: string): s is QueryFormat => (QUERY_FORMATS as readonly string[]).includes(s);

/** Rows a table shows at most: it measures its columns on them, so it holds them; csv and json stream every row. */
export const TABLE_ROWS = 1000;

/** A value as text: 64-bit integers exact, bytes as hex, -0 kept, lists as DuckDB writes them. */
function text(v: QueryValue): string {
  if (v === null) return 'NULL';
  if (v instanceof Uint8Array) return hex(v);
  if (Array.isArray(v)) return `[${v.map(text).join(', ')}]`;
  if (typeof v === 'number' && Object.is(v, -0)) return '-0';
  return String(v);
}

/** CSV (RFC 4180): NULL is an empty cell, and what is not a number or boolean is quoted (so an empty string is never read back as NULL). */
function csvCell(v: QueryValue): string {
  if (v === null) return '';
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return text(v);
  return `"${text(v).replaceAll('"', '""')}"`;
}

const csvHeader = (columns: readonly QueryColumn[]): string => columns.map((c) => (/[",\r\n]/.test(c.name) ? `"${c.name.replaceAll('"', '""')}"` : c.name)).join(',');

/**
 * JSON: 64-bit integers as exact JSON numbers (JavaScript's JSON.parse rounds those beyond 2^53;
 * Python, jq and DuckDB read them exactly), bytes as hex strings, NaN and infinities as null.
 */
function jsonValue(v: QueryValue): string {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return JSON.stringify(hex(v));
  if (Array.isArray(v)) return `[${v.map(jsonValue).join(',')}]`;
  return JSON.stringify(v);
}

const jsonRow = (columns: readonly QueryColumn[], row: readonly QueryValue[]): string => `{${columns.map((c, i) => `${JSON.stringify(c.name)}:${jsonValue(row[i]!)}`).join(',')}}`;

const NUMERIC = /^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL.*)$/;

/** Table cells and headings: NULL spelt out, control characters escaped so each row stays one line. */
const tableCell = (v: QueryValue): string => printable(text(v));

function table(columns: readonly QueryColumn[], rows: ReadonlyArray<readonly QueryValue[]>): string {
  const cells = rows.map((r) => r.map(tableCell));
  const names = columns.map((c) => printable(c.name));
  const types = columns.map((c) => printable(c.type));
  const widths = columns.map((_, i) => Math.max(names[i]!.length, types[i]!.length, ...cells.map((r) => r[i]!.length)));
  const right = columns.map((c) => NUMERIC.test(c.type));
  const line = (r: readonly string[]) => r.map((s, i) => (right[i] ? s.padStart(widths[i]!) : s.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(names), line(types), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].map((l) => `${l}\n`).join('');
}

/**
 * Writes one statement's result in `format`, streaming: csv and json as their chunks arrive, a
 * table after its first TABLE_ROWS rows (then it counts the rest and says how many it left out).
 * Resolves with the number of rows.
 */
export async function writeResult(result: QueryResult, format: QueryFormat, write: (s: string) => Promise<void>): Promise<number> {
  const { columns } = result;
  let rows = 0;
  if (format === 'table') {
    const shown: Array<readonly QueryValue[]> = [];
    for await (const chunk of result.chunks) {
      for (const row of chunk) if (shown.length < TABLE_ROWS) shown.push(row);
      rows += chunk.length;
    }
    const more = rows > shown.length ? `, the first ${shown.length.toLocaleString('en-US')} shown (--format csv or json prints every row)` : '';
    await write(`${table(columns, shown)}(${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}${more})\n`);
    return rows;
  }
  if (format === 'csv') await write(`${csvHeader(columns)}\n`);
  else await write('[');
  for await (const chunk of result.chunks) {
    const lines = chunk.map((row, i) => (format === 'csv' ? `${row.map(csvCell).join(',')}\n` : `${rows + i === 0 ? '\n' : ',\n'}${jsonRow(columns, row)}`));
    rows += chunk.length;
    await write(lines.join(''));
  }
  if (format === 'json') await write(rows === 0 ? ']\n' : '\n]\n');
  return rows;
}
