/**
 * The numbers inside Runtime.HeapSnapshot's bulk payloads: unsigned LEB128 varints of plain Numbers
 * (exact up to 2^53), so a self size past 4 GiB survives and small values take one byte.
 */

/** Writes `v` (a whole number, 0 ≤ v ≤ 2^53) at `pos`; returns the end. The caller leaves 8 bytes of room. */
export function writeVarint(buf: Uint8Array, pos: number, v: number): number {
  if (v < 0x80000000) {
    while (v > 127) {
      buf[pos++] = (v & 127) | 128;
      v >>>= 7;
    }
  } else {
    while (v > 127) {
      buf[pos++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
  }
  buf[pos++] = v;
  return pos;
}

/**
 * Decodes exactly `n` varints of `payload` into `out`; false when the payload holds fewer, more, or
 * one longer than 8 bytes (a damaged event).
 */
export function readVarints(payload: Uint8Array, out: Float64Array, n: number): boolean {
  let p = 0;
  const end = payload.length;
  for (let i = 0; i < n; i++) {
    if (p >= end) return false;
    let b = payload[p++]!;
    if (b < 128) {
      out[i] = b;
      continue;
    }
    let v = b & 127;
    let mul = 128;
    for (let k = 1; ; k++) {
      if (p >= end || k === 8) return false;
      b = payload[p++]!;
      v += (b & 127) * mul;
      if (b < 128) break;
      mul *= 128;
    }
    out[i] = v;
  }
  return p === end;
}
