import * as zlib from 'node:zlib';

/** CRC-32 (IEEE) of a block payload; node:zlib's native one where this Node has it (20.15+). */
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

const native = (zlib as unknown as { crc32?: (d: Uint8Array, previous?: number) => number }).crc32;
export const crc32: (data: Uint8Array, previous?: number) => number = native ? (d, previous = 0) => native(d, previous) >>> 0 : crc32Portable;
