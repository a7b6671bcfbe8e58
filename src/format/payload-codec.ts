import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { PayloadLayout } from '../schema/payload-layout.js';
import { TraceFormatError } from './format-error.js';

const utf8 = new TextDecoder('utf-8');

/** Strings up to this many bytes are remembered per field (see textField); longer ones rarely repeat. */
const MAX_REMEMBERED_TEXT = 32;

/** Decodes one string field of a type, from `b[start, end)`. */
type TextField = (b: Uint8Array, start: number, end: number) => string;

/**
 * The decoder of one string field, remembering its last short value: methods, routes, names and
 * empty strings repeat from one event to the next, and comparing a few bytes costs less than decoding
 * them and keeps one string alive instead of one per event. The same bytes give the same text.
 */
function textField(): TextField {
  const last = new Uint8Array(MAX_REMEMBERED_TEXT);
  let lastLength = -1;
  let lastText = '';
  return (b, start, end) => {
    const n = end - start;
    if (n === 0) return '';
    if (n > MAX_REMEMBERED_TEXT) return utf8.decode(b.subarray(start, end));
    if (n === lastLength) {
      let i = 0;
      while (i < n && b[start + i] === last[i]) i++;
      if (i === n) return lastText;
    }
    const bytes = b.subarray(start, end);
    lastText = utf8.decode(bytes);
    last.set(bytes);
    lastLength = n;
    return lastText;
  };
}

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

/** The DataView getter of each fixed-size type (little-endian; a bool is a byte that is not 0). */
const GETTER = {
  bool: 'getUint8', u8: 'getUint8', i8: 'getInt8', u16: 'getUint16', i16: 'getInt16', u32: 'getUint32', i32: 'getInt32',
  f32: 'getFloat32', f64: 'getFloat64', u64: 'getBigUint64', i64: 'getBigInt64',
} as const;

/**
 * Types with more fields than this get the loop decoder: past about 64 fields a generated decoder is
 * no faster, and its code and its objects' boilerplate cost memory (a trace of 1,024-field types read
 * with generated decoders peaked 50 MB higher).
 */
const MAX_GENERATED_FIELDS = 64;

/** The decoder of one layout (see payload-layout.ts); the loop decoder where code generation is refused (code-generation.ts). */
export function payloadDecoder(layout: PayloadLayout): PayloadDecoder {
  return codeGenerationAllowed && layout.fields.length <= MAX_GENERATED_FIELDS ? generatedDecoder(layout) : loopDecoder(layout);
}

/**
 * Straight-line reads at constant offsets into one object literal in declaration order, so every
 * event of a type gets the same object shape and no loop or switch runs per field. Field names are
 * quoted as JSON string literals; `__proto__` becomes a computed key, so a name can never set the
 * object's prototype.
 */
function generatedDecoder(layout: PayloadLayout): PayloadDecoder {
  const lines = [`if (n < ${layout.fixedSize}) tooShort(n, ${layout.fixedSize}, base);`, `let q = s + ${layout.fixedSize};`];
  for (const f of layout.variable) {
    const len = `n${f.index}`;
    lines.push(
      `const ${len} = v.getUint32(s + ${f.offset}, true);`,
      `if (q + ${len} > s + n) overrun(${JSON.stringify(f.name)}, ${len}, base);`,
      f.type === 'string' ? `const x${f.index} = texts[${f.index}](b, q, q + ${len});` : `const x${f.index} = b.slice(q, q + ${len});`,
      `q += ${len};`,
    );
  }
  lines.push(`if (q !== s + n) wrongLength(n, q - s, base);`);
  const props = layout.fields.map((f) => {
    const key = f.name === '__proto__' ? `[${JSON.stringify(f.name)}]` : JSON.stringify(f.name);
    const value = f.type === 'string' || f.type === 'bytes' ? `x${f.index}` : `v.${GETTER[f.type]}(s + ${f.offset}, true)${f.type === 'bool' ? ' !== 0' : ''}`;
    return `${key}: ${value}`;
  });
  const src = `return function decode(v, b, s, n, base) {\n  ${lines.join('\n  ')}\n  return { ${props.join(', ')} };\n};`;
  const texts = layout.fields.map((f) => (f.type === 'string' ? textField() : undefined));
  return new Function('texts', 'tooShort', 'overrun', 'wrongLength', src)(texts, tooShort, overrun, wrongLength) as PayloadDecoder;
}

/** One field at a time, for wide types: checked first, fields set in declaration order. */
function loopDecoder(layout: PayloadLayout): PayloadDecoder {
  const texts = layout.variable.map((f) => (f.type === 'string' ? textField() : undefined));
  return (v, b, s, n, base) => {
    checkPayload(layout, b, s, n, base);
    const out: DecodedFields = {};
    for (const f of layout.fields) {
      if (f.type === 'string' || f.type === 'bytes') {
        setField(out, f.name, ''); // keeps declaration order; filled below, in byte order
        continue;
      }
      const value = (v[GETTER[f.type]] as (this: DataView, o: number, le: boolean) => number | bigint).call(v, s + f.offset, true);
      setField(out, f.name, f.type === 'bool' ? value !== 0 : value);
    }
    let q = s + layout.fixedSize;
    for (let i = 0; i < layout.variable.length; i++) {
      const f = layout.variable[i]!;
      const len = v.getUint32(s + f.offset, true);
      setField(out, f.name, f.type === 'string' ? texts[i]!(b, q, q + len) : b.slice(q, q + len));
      q += len;
    }
    return out;
  };
}

/** Stores a field as an own data property whatever its name: assigning `__proto__` would set the prototype. */
function setField(out: DecodedFields, name: string, value: DecodedFields[string]): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}
