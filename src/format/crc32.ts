import { requireBuiltin } from '../schema/this-thread.js';

/**
 * CRC-32 (IEEE) of a block payload; node:zlib's native one where this Node has it (20.15+), for
 * inputs long enough to pay for loading node:zlib (~5 ms, which a session's start on the main thread,
 * checksumming only its stream header, need not pay).
 */
const table = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** `previous` continues a checksum over bytes that came before `data`. */
export function crc32Portable(data: Uint8Array, previous = 0): number {
  let c = previous ^ -1;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** Below this many bytes the table is as quick as loading node:zlib would be worth. */
const NATIVE_FROM_BYTES = 4096;
let native: ((d: Uint8Array, previous?: number) => number) | null | undefined;

export function crc32(data: Uint8Array, previous = 0): number {
  if (data.length < NATIVE_FROM_BYTES) return crc32Portable(data, previous);
  native ??= (requireBuiltin('node:zlib') as { crc32?: (d: Uint8Array, previous?: number) => number }).crc32 ?? null;
  return native ? native(data, previous) >>> 0 : crc32Portable(data, previous);
}
