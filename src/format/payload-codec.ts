import type { PayloadLayout } from '../schema/payload-layout.js';
import { TraceFormatError } from './format-error.js';

const utf8 = new TextDecoder('utf-8');

export type DecodedFields = Record<string, boolean | number | bigint | string | Uint8Array>;

function tooShort(length: number, fixed: number, base: number): never {
  throw new TraceFormatError('corrupt', `corrupt trace: payload of ${length} bytes is shorter than its fixed part (${fixed}) at byte ${base}`, base);
}
function overrun(name: string, n: number, base: number): never {
  throw new TraceFormatError('corrupt', `corrupt trace: field '${name}' (${n} bytes) runs past its payload at byte ${base}`, base);
}
function wrongLength(length: number, used: number, base: number): never {
  throw new TraceFormatError('corrupt', `corrupt trace: payload is ${length} bytes but its fields take ${used} at byte ${base}`, base);
}

/**
 * Checks that a payload matches its layout (see payload-layout.ts): its fixed part, then exactly the
 * bytes its variable fields declare. `base` is the stream offset of `bytes[start]` for error messages.
 */
export function checkPayload(layout: PayloadLayout, bytes: Uint8Array, start: number, length: number, base: number): void {
  if (length < layout.fixedSize) tooShort(length, layout.fixedSize, base);
  if (layout.variable.length === 0 && length === layout.fixedSize) return;
  const v = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  let q = layout.fixedSize;
  for (const f of layout.variable) {
    const n = v.getUint32(f.offset, true);
    if (q + n > length) overrun(f.name, n, base);
    q += n;
  }
  if (q !== length) wrongLength(length, q, base);
}

/**
 * Decodes one payload, checked as checkPayload does: `view` and `bytes` cover the same memory (one
 * events block), the payload is `length` bytes at `start`, and `base` is the stream offset of
 * `bytes[start]` for error messages. Byte fields are copied so they outlive the bytes they came from.
 */
export type PayloadDecoder = (view: DataView, bytes: Uint8Array, start: number, length: number, base: number) => DecodedFields;

const READ: Record<string, (o: string) => string> = {
  bool: (o) => `v.getUint8(${o}) !== 0`,
  u8: (o) => `v.getUint8(${o})`,
  i8: (o) => `v.getInt8(${o})`,
  u16: (o) => `v.getUint16(${o}, true)`,
  i16: (o) => `v.getInt16(${o}, true)`,
  u32: (o) => `v.getUint32(${o}, true)`,
  i32: (o) => `v.getInt32(${o}, true)`,
  f32: (o) => `v.getFloat32(${o}, true)`,
  f64: (o) => `v.getFloat64(${o}, true)`,
  u64: (o) => `v.getBigUint64(${o}, true)`,
  i64: (o) => `v.getBigInt64(${o}, true)`,
};

/**
 * Generates the decoder of one layout (see payload-layout.ts): straight-line reads at constant
 * offsets into one object literal in declaration order, so every event of a type gets the same
 * object shape and no loop or switch runs per field. Field names are quoted as JSON string literals;
 * `__proto__` becomes a computed key, so a name can never set the object's prototype.
 */
export function payloadDecoder(layout: PayloadLayout): PayloadDecoder {
  const lines = [`if (n < ${layout.fixedSize}) tooShort(n, ${layout.fixedSize}, base);`, `let q = s + ${layout.fixedSize};`];
  for (const f of layout.variable) {
    const len = `n${f.index}`;
    lines.push(
      `const ${len} = v.getUint32(s + ${f.offset}, true);`,
      `if (q + ${len} > s + n) overrun(${JSON.stringify(f.name)}, ${len}, base);`,
      f.type === 'string' ? `const x${f.index} = utf8.decode(b.subarray(q, q + ${len}));` : `const x${f.index} = b.slice(q, q + ${len});`,
      `q += ${len};`,
    );
  }
  lines.push(`if (q !== s + n) wrongLength(n, q - s, base);`);
  const props = layout.fields.map((f) => {
    const key = f.name === '__proto__' ? `[${JSON.stringify(f.name)}]` : JSON.stringify(f.name);
    const value = f.type === 'string' || f.type === 'bytes' ? `x${f.index}` : READ[f.type]!(`s + ${f.offset}`);
    return `${key}: ${value}`;
  });
  const src = `return function decode(v, b, s, n, base) {\n  ${lines.join('\n  ')}\n  return { ${props.join(', ')} };\n};`;
  return new Function('utf8', 'tooShort', 'overrun', 'wrongLength', src)(utf8, tooShort, overrun, wrongLength) as PayloadDecoder;
}
