import type { TypeRow } from '../../heap/type-statistics.js';
import { CliError } from '../cli-error.js';
import { printable } from '../printable.js';

/** Whole numbers as digits with thousands separators: 2,000,000. */
export function digits(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** A signed change: +1,234 or -56 (0 unsigned). */
export function delta(n: number): string {
  return n > 0 ? `+${digits(n)}` : digits(n);
}

/** `--top N`: rows per table (default 10); or another whole-number option, named. */
export function parseTop(text: string | undefined, option = '--top'): number {
  if (text === undefined) return 10;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new CliError(`${option} must be a whole number, at least 1, not '${text}'`);
  return Number(text);
}

/** Aligned rows of any columns; the last column (the type's name) is left-aligned and unpadded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]): string => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padStart(w[i]!))).join('  ')}`;
  return [line(header), ...rows.map(line)];
}

export function typeTable(rows: readonly TypeRow[]): string[] {
  return table(
    ['count', 'self bytes', 'retained bytes', 'type'],
    rows.map((r) => [digits(r.count), digits(r.selfBytes), digits(r.retainedBytes), printable(r.name)]),
  );
}
