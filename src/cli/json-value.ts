/** JSON that keeps bigints (as decimal strings) and byte arrays (as hex). */
export function toJsonValue(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJsonValue(x)]));
  return v;
}

export function stringify(v: unknown, indent?: number): string {
  return JSON.stringify(toJsonValue(v), null, indent);
}
