/**
 * JSON text for field values, built by concatenation (converters write millions of them; building
 * objects for JSON.stringify would cost more than the rest of the conversion).
 */

/** A JSON number; NaN and ±Infinity have no JSON form and become null, as JSON.stringify does. */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** As `dump --format jsonl` writes a field: 64-bit integers as decimal strings, bytes as hex strings. */
export function dumpJsonValue(v: boolean | number | bigint | string | Uint8Array): string {
  switch (typeof v) {
    case 'number': return jsonNumber(v);
    case 'string': return JSON.stringify(v);
    case 'boolean': return v ? 'true' : 'false';
    case 'bigint': return `"${v}"`;
    default: return `"${hex(v)}"`;
  }
}

/** For viewers' arguments: numbers as numbers, 64-bit integers as exact JSON number literals. */
export function numericJsonValue(v: boolean | number | bigint | string | Uint8Array): string {
  return typeof v === 'bigint' ? String(v) : dumpJsonValue(v);
}
