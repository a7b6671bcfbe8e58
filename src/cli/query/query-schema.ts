import { stringify } from '../json-value.js';
import { printable } from '../printable.js';
import type { QueryFormat } from './query-format.js';
import type { TableSchema } from './query-engine.js';

/** A name as it can be written in SQL: "Runtime.GC/GCPause" quoted, plain names as they are (DuckDB matches them case-insensitively). */
export const sqlName = (name: string): string => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`);

/** The tables and their columns, for `--schema` and the prompt's `.schema`: text, CSV (one row per column) or JSON. */
export function formatSchema(tables: readonly TableSchema[], format: QueryFormat): string {
  if (format === 'json') return `${stringify(tables, 2)}\n`;
  if (format === 'csv') {
    const rows = tables.flatMap((t) => t.columns.map((c) => [t.name, t.kind, String(t.rows), c.name, c.type].map((v) => `"${v.replaceAll('"', '""')}"`).join(',')));
    return `table,kind,rows,column,type\n${rows.map((r) => `${r}\n`).join('')}`;
  }
  return tables
    .map((t) => {
      const names = t.columns.map((c) => printable(sqlName(c.name)));
      const w = Math.max(...names.map((n) => n.length));
      const columns = t.columns.map((c, i) => `  ${names[i]!.padEnd(w)}  ${printable(c.type)}\n`).join('');
      return `${printable(sqlName(t.name))}  (${t.kind}, ${t.rows.toLocaleString('en-US')} row${t.rows === 1 ? '' : 's'})\n${columns}`;
    })
    .join('\n');
}
