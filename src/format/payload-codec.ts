import type { PayloadLayout } from '../schema/payload-layout.js';
import { TraceFormatError } from './format-error.js';

const utf8 = new TextDecoder('utf-8');

export type DecodedFields = Record<string, boolean | number | bigint | string | Uint8Array>;

/**
 * Decodes one payload (see payload-layout.ts). `base` is the stream offset of `bytes[start]` for
 * error messages. Byte fields are copied so they outlive the block they came from.
 */
export function decodePayload(layout: PayloadLayout, bytes: Uint8Array, start: number, length: number, base: number): DecodedFields {
  if (length < layout.fixedSize) {
    throw new TraceFormatError('corrupt', `corrupt trace: payload of ${length} bytes is shorter than its fixed part (${layout.fixedSize}) at byte ${base}`, base);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  const out: DecodedFields = {};
  for (const f of layout.fields) {
    const o = f.offset;
    switch (f.type) {
      case 'bool': out[f.name] = v.getUint8(o) !== 0; break;
      case 'u8': out[f.name] = v.getUint8(o); break;
      case 'i8': out[f.name] = v.getInt8(o); break;
      case 'u16': out[f.name] = v.getUint16(o, true); break;
      case 'i16': out[f.name] = v.getInt16(o, true); break;
      case 'u32': out[f.name] = v.getUint32(o, true); break;
      case 'i32': out[f.name] = v.getInt32(o, true); break;
      case 'f32': out[f.name] = v.getFloat32(o, true); break;
      case 'f64': out[f.name] = v.getFloat64(o, true); break;
      case 'u64': out[f.name] = v.getBigUint64(o, true); break;
      case 'i64': out[f.name] = v.getBigInt64(o, true); break;
      default: out[f.name] = ''; // keeps declaration order; filled below, in byte order
    }
  }
  let q = layout.fixedSize;
  for (const f of layout.variable) {
    const n = v.getUint32(f.offset, true);
    if (q + n > length) {
      throw new TraceFormatError('corrupt', `corrupt trace: field '${f.name}' (${n} bytes) runs past its payload at byte ${base}`, base);
    }
    const s = bytes.subarray(start + q, start + q + n);
    out[f.name] = f.type === 'string' ? utf8.decode(s) : s.slice();
    q += n;
  }
  if (q !== length) {
    throw new TraceFormatError('corrupt', `corrupt trace: payload is ${length} bytes but its fields take ${q} at byte ${base}`, base);
  }
  return out;
}
