import type { DecodedFields } from '../format/payload-codec.js';
import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { FieldType } from '../schema/field-type.js';
import { hex, TextWriter, utf8 } from './text-writer.js';

/** JSON text for the JSON formats: numbers as JavaScript prints them, NaN and ±Infinity (which JSON cannot hold) as null, as JSON.stringify does. */
export class JsonWriter extends TextWriter {
  number(n: number): void {
    // 32-bit integers (most values in traces) digit by digit; String(-0) is "0", as integer() writes it.
    if ((n | 0) === n) this.integer(n);
    else if (Number.isFinite(n)) this.double(n);
    else this.ascii('null');
  }

  /** A JSON string literal: printable ASCII that needs no escape byte by byte, anything else through quoted(). */
  text(s: string): void {
    this.ensure(s.length + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 34;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return this.quoted(s);
      buf[p++] = c;
    }
    buf[p++] = 34;
    this.pos = p;
  }

  /** A string literal as JSON.stringify writes it. */
  protected quoted(s: string): void {
    this.utf8(JSON.stringify(s));
  }

  /** For viewers' arguments: numbers as numbers, 64-bit integers as exact JSON number literals, bytes as hex. */
  numericValue(v: DecodedFields[string]): void {
    switch (typeof v) {
      case 'number': return this.number(v);
      case 'string': return this.text(v);
      case 'boolean': return this.ascii(v ? 'true' : 'false');
      case 'bigint': return this.ascii(String(v));
      default: return this.ascii(`"${hex(v)}"`);
    }
  }
}

/**
 * How 64-bit integers are written: as decimal strings, as `dump --format jsonl` does (JSON readers
 * parse numbers as doubles), or as exact number literals, for viewers that show them as numbers.
 */
export type BigIntStyle = 'string' | 'number';

function writeValue(type: FieldType, v: string, bigints: BigIntStyle): string {
  switch (type) {
    case 'bool': return `w.ascii(${v} ? 'true' : 'false')`;
    case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32': return `w.integer(${v})`;
    case 'f32': case 'f64': return `w.number(${v})`;
    case 'u64': case 'i64': return bigints === 'string' ? `w.ascii('"' + ${v} + '"')` : `w.ascii(String(${v}))`;
    case 'string': return `w.text(${v})`;
    case 'bytes': return `w.ascii('"' + hex(${v}) + '"')`;
  }
}

/** writeValue's code, run: for a process that may not compile code from strings (code-generation.ts). */
function writeValueNow(w: JsonWriter, type: FieldType, v: DecodedFields[string], bigints: BigIntStyle): void {
  switch (type) {
    case 'bool': return w.ascii(v ? 'true' : 'false');
    case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32': return w.integer(v as number);
    case 'f32': case 'f64': return w.number(v as number);
    case 'u64': case 'i64': return w.ascii(bigints === 'string' ? '"' + String(v) + '"' : String(v));
    case 'string': return w.text(v as string);
    case 'bytes': return w.ascii('"' + hex(v as Uint8Array) + '"');
  }
}

/** Writes a type's fields as the members of a JSON object (without braces). */
export type FieldsWriter = (w: JsonWriter, fields: DecodedFields) => void;

/**
 * The writer of one type's fields: generated straight-line code with each field read by a constant
 * key and written by its type's method, so nothing is looked up or tested per field. `keys` is the
 * decoded object's own key order (integer-like keys first), which is what JSON.stringify shows.
 */
export function fieldsWriter(keys: readonly string[], types: ReadonlyMap<string, FieldType>, bigints: BigIntStyle): FieldsWriter {
  const prefixes = keys.map((k, i) => utf8(`${i ? ',' : ''}${JSON.stringify(k)}:`));
  if (!codeGenerationAllowed) {
    const kinds = keys.map((k) => types.get(k)!);
    return (w, f) => {
      for (let i = 0; i < keys.length; i++) {
        w.raw(prefixes[i]!);
        writeValueNow(w, kinds[i]!, f[keys[i]!]!, bigints);
      }
    };
  }
  const lines = keys.map((k, i) => `w.raw(p[${i}]); ${writeValue(types.get(k)!, `f[${JSON.stringify(k)}]`, bigints)};`);
  return new Function('p', 'hex', `return function writeFields(w, f) {\n  ${lines.join('\n  ')}\n};`)(prefixes, hex) as FieldsWriter;
}
