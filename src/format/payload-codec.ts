import type { PayloadLayout } from '../schema/payload-layout.js';
import { TraceFormatError } from './format-error.js';

const utf8 = new TextDecoder('utf-8');

export type DecodedFields = Record<string, boolean | number | bigint | string | Uint8Array>;

/**
 * Checks that a payload matches its layout (see payload-layout.ts): its fixed part, then exactly the
 * bytes its variable fields declare. `base` is the stream offset of `bytes[start]` for error messages.
 */
export function checkPayload(layout: PayloadLayout, bytes: Uint8Array, start: number, length: number, base: number): void {
  if (length < layout.fixedSize) {
    throw new TraceFormatError('corrupt', `corrupt trace: payload of ${length} bytes is shorter than its fixed part (${layout.fixedSize}) at byte ${base}`, base);
  }
  if (layout.variable.length === 0 && length === layout.fixedSize) return;
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  let q = layout.fixedSize;
  for (const f of layout.variable) {
    const n = v.getUint32(f.offset, true);
    if (q + n > length) {
      throw new TraceFormatError('corrupt', `corrupt trace: field '${f.name}' (${n} bytes) runs past its payload at byte ${base}`, base);
    }
    q += n;
  }
  if (q !== length) {
    throw new TraceFormatError('corrupt', `corrupt trace: payload is ${length} bytes but its fields take ${q} at byte ${base}`, base);
  }
}

/**
 * Stores a field as an own data property whatever its name: a plain assignment of `__proto__` would
 * set the record's prototype instead (the field would vanish, or the record inherit from a value).
 */
function setField(out: DecodedFields, name: string, value: DecodedFields[string]): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}

/** Decodes one payload, checked first (see checkPayload). Byte fields are copied so they outlive the bytes they came from. */
export function decodePayload(layout: PayloadLayout, bytes: Uint8Array, start: number, length: number, base: number): DecodedFields {
  checkPayload(layout, bytes, start, length, base);
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  const out: DecodedFields = {};
  for (const f of layout.fields) {
    const o = f.offset;
    let value: DecodedFields[string];
    switch (f.type) {
      case 'bool': value = v.getUint8(o) !== 0; break;
      case 'u8': value = v.getUint8(o); break;
      case 'i8': value = v.getInt8(o); break;
      case 'u16': value = v.getUint16(o, true); break;
      case 'i16': value = v.getInt16(o, true); break;
      case 'u32': value = v.getUint32(o, true); break;
      case 'i32': value = v.getInt32(o, true); break;
      case 'f32': value = v.getFloat32(o, true); break;
      case 'f64': value = v.getFloat64(o, true); break;
      case 'u64': value = v.getBigUint64(o, true); break;
      case 'i64': value = v.getBigInt64(o, true); break;
      default: value = ''; // keeps declaration order; filled below, in byte order
    }
    setField(out, f.name, value);
  }
  let q = layout.fixedSize;
  for (const f of layout.variable) {
    const n = v.getUint32(f.offset, true);
    const s = bytes.subarray(start + q, start + q + n);
    setField(out, f.name, f.type === 'string' ? utf8.decode(s) : s.slice());
    q += n;
  }
  return out;
}
