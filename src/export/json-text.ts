import type { DecodedFields } from '../format/payload-codec.js';
import { codeGenerationAllowed } from '../schema/code-generation.js';
import type { FieldType } from '../schema/field-type.js';
import { hex, MAX_NUMBER_TEXT, putAscii, putBytes, putDouble, putInteger, TextWriter, utf8 } from './text-writer.js';

/** A number as JSON: as JavaScript prints it, NaN and ±Infinity (which JSON cannot hold) as null, as JSON.stringify does. */
export function putNumber(b: Uint8Array, p: number, n: number): number {
  // 32-bit integers (most values in traces) digit by digit; String(-0) is "0", as putInteger writes it.
  if ((n | 0) === n) return putInteger(b, p, n);
  if (Number.isFinite(n)) return putDouble(b, p, n);
  return putAscii(b, p, 'null');
}

/** JSON text for the JSON formats (numbers as putNumber writes them). */
export class JsonWriter extends TextWriter {
  number(n: number): void {
    this.ensure(MAX_NUMBER_TEXT);
    this.pos = putNumber(this.buf, this.pos, n);
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

/**
 * The code that writes a value of `type`, held in `v`, at b[p] in room reserved for it (at most
 * MAX_NUMBER_TEXT bytes), or undefined for a string or bytes, whose length has no bound: those go
 * through the JsonWriter, which reserves their room itself.
 */
function putValue(type: FieldType, v: string, bigints: BigIntStyle): string | undefined {
  switch (type) {
    case 'bool': return `p = putAscii(b, p, ${v} ? 'true' : 'false')`;
    case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32': return `p = putInteger(b, p, ${v})`;
    case 'f32': case 'f64': return `p = putNumber(b, p, ${v})`;
    // At most 20 digits and a sign, 22 bytes quoted.
    case 'u64': case 'i64': return bigints === 'string' ? `p = putAscii(b, p, '"' + ${v} + '"')` : `p = putAscii(b, p, String(${v}))`;
    case 'string': case 'bytes': return undefined;
  }
}

/** The code that writes a string or bytes value held in `v` through the JsonWriter `w`. */
function writeUnbounded(type: 'string' | 'bytes', v: string): string {
  return type === 'string' ? `w.text(${v})` : `w.ascii('"' + hex(${v}) + '"')`;
}

/** Constant bytes at b[p] as literal stores (no copy loop, no source to read), or copied from `source` when long. */
function putConstant(bytes: Uint8Array, source: string): string {
  if (bytes.length > 16) return `p = putBytes(b, p, ${source});`;
  return `${Array.from(bytes, (x, i) => `b[p${i ? ` + ${i}` : ''}] = ${x};`).join(' ')} p += ${bytes.length};`;
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

/** Writes a type's fields as the members of a JSON object (without its opening brace), then the writer's closing text. */
export type FieldsWriter = (w: JsonWriter, fields: DecodedFields) => void;

/**
 * The writer of one type's fields: generated straight-line code with each field read by a constant
 * key and written by its type's function, the keys and `close` (text after the last member, such as
 * the object's closing braces) as literal byte stores, and room reserved once for every value of
 * bounded length up to the next string or bytes field, so nothing is looked up, copied in a loop or
 * tested per field. `keys` is the decoded object's own key order (integer-like keys first), which is
 * what JSON.stringify shows.
 */
export function fieldsWriter(keys: readonly string[], types: ReadonlyMap<string, FieldType>, bigints: BigIntStyle, close = ''): FieldsWriter {
  const prefixes = keys.map((k, i) => utf8(`${i ? ',' : ''}${JSON.stringify(k)}:`));
  const closing = utf8(close);
  if (!codeGenerationAllowed) {
    const kinds = keys.map((k) => types.get(k)!);
    return (w, f) => {
      for (let i = 0; i < keys.length; i++) {
        w.raw(prefixes[i]!);
        writeValueNow(w, kinds[i]!, f[keys[i]!]!, bigints);
      }
      w.raw(closing);
    };
  }
  // Runs of bounded values, each after one reservation of its room; a string or bytes field ends a run.
  const runs: Array<{ room: number; lines: string[] }> = [{ room: 0, lines: [] }];
  keys.forEach((k, i) => {
    const run = runs[runs.length - 1]!;
    const type = types.get(k)!;
    const v = `f[${JSON.stringify(k)}]`;
    run.lines.push(putConstant(prefixes[i]!, `P[${i}]`));
    run.room += prefixes[i]!.length;
    const put = putValue(type, v, bigints);
    if (put !== undefined) {
      run.lines.push(`${put};`);
      run.room += MAX_NUMBER_TEXT;
    } else {
      run.lines.push('w.pos = p;', `${writeUnbounded(type as 'string' | 'bytes', v)};`);
      runs.push({ room: 0, lines: [] });
    }
  });
  const last = runs[runs.length - 1]!;
  if (closing.length > 0) last.lines.push(putConstant(closing, 'C'));
  last.room += closing.length;
  // A run after the last string or bytes field with nothing to close has nothing to write.
  if (last.lines.length === 0) runs.pop();
  else last.lines.push('w.pos = p;');
  const body = runs.map((r) => [`w.ensure(${r.room}); b = w.buf; p = w.pos;`, ...r.lines].join('\n  ')).join('\n  ');
  const src = `return function writeFields(w, f) {\n  let b, p;\n  ${body}\n};`;
  return new Function('P', 'C', 'hex', 'putAscii', 'putBytes', 'putInteger', 'putNumber', src)(prefixes, closing, hex, putAscii, putBytes, putInteger, putNumber) as FieldsWriter;
}
