import { ByteWriter } from '../format/byte-writer.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { FieldType } from '../schema/field-type.js';

const encoder = new TextEncoder();

const doubleBits = new Float64Array(1);
const bitWords = new Uint32Array(doubleBits.buffer);
const keys = new Float64Array(1024);
const texts: Array<string | undefined> = new Array(1024).fill(undefined);

/** The three-digit fractions of a microsecond, ".000" to ".999". */
const FRACTIONS = Array.from({ length: 1000 }, (_, i) => `.${String(i).padStart(3, '0')}`);

/**
 * JSON text written straight into bytes: converters write millions of values, and building strings
 * (or objects for JSON.stringify) then encoding them would cost more than the rest of the conversion.
 * Numbers are written as JavaScript prints them; NaN and ±Infinity, which JSON cannot hold, as null
 * (as JSON.stringify does).
 */
export class JsonWriter extends ByteWriter {
  /** Bytes made once (e.g. from `utf8(...)`), such as a type's constant prefix. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    if (b.length > 32) {
      this.buf.set(b, this.pos);
      this.pos += b.length;
      return;
    }
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < b.length; i++) buf[p++] = b[i]!;
    this.pos = p;
  }

  /** Text known to be ASCII (numbers, punctuation). */
  ascii(s: string): void {
    this.ensure(s.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** An integer-valued field (u8 … i32): 32-bit values digit by digit, without making a string. */
  integer(n: number): void {
    if (n < 0) {
      if (n < -0x7fffffff) return this.ascii(String(n));
      this.ensure(1);
      this.buf[this.pos++] = 45; // '-'
      n = -n;
    } else if (n > 0x7fffffff) return this.ascii(String(n));
    this.ensure(10);
    let digits = 1;
    for (let m = n; m >= 10; m = (m / 10) | 0) digits++;
    const buf = this.buf;
    let p = this.pos + digits;
    this.pos = p;
    do {
      const q = (n / 10) | 0;
      buf[--p] = 48 + n - q * 10;
      n = q;
    } while (n > 0);
  }

  /**
   * Turning a double into its shortest text costs V8 about 200 ns (its number-string cache does not
   * serve values read from a DataView), more than the rest of an event; traces repeat values a lot
   * (constants, counters, enums), so the last text of each of 1024 slots, by the double's bits, is kept.
   */
  number(n: number): void {
    doubleBits[0] = n;
    const slot = (bitWords[0]! ^ bitWords[1]! ^ (bitWords[1]! >>> 10)) & 1023;
    let text = texts[slot];
    if (keys[slot] !== n || text === undefined || Object.is(n, -0) !== Object.is(keys[slot], -0)) {
      text = Number.isFinite(n) ? String(n) : 'null';
      keys[slot] = n;
      texts[slot] = text;
    }
    this.ascii(text);
  }

  /** A JSON string literal. */
  text(s: string): void {
    const lit = JSON.stringify(s);
    this.ensure(lit.length * 3);
    this.pos += encoder.encodeInto(lit, this.buf.subarray(this.pos)).written;
  }

  /** Nanoseconds as microseconds with exactly three decimals (Chrome's unit, no rounding). */
  microseconds(ns: number): void {
    ns = Math.round(ns);
    if (ns < 0) {
      this.ascii('-');
      ns = -ns;
    }
    const us = Math.floor(ns / 1000);
    this.integer(us);
    this.ascii(FRACTIONS[ns - us * 1000]!);
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

/** Writes a type's fields as the members of a JSON object (without braces). */
export type FieldsWriter = (w: JsonWriter, fields: DecodedFields) => void;

/**
 * Generates the writer of one type's fields: straight-line code with each field read by a constant
 * key and written by its type's method, so nothing is looked up or tested per field. `keys` is the
 * decoded object's own key order (integer-like keys first), which is what JSON.stringify shows.
 */
export function fieldsWriter(keys: readonly string[], types: ReadonlyMap<string, FieldType>, bigints: BigIntStyle): FieldsWriter {
  const prefixes = keys.map((k, i) => utf8(`${i ? ',' : ''}${JSON.stringify(k)}:`));
  const lines = keys.map((k, i) => `w.raw(p[${i}]); ${writeValue(types.get(k)!, `f[${JSON.stringify(k)}]`, bigints)};`);
  return new Function('p', 'hex', `return function writeFields(w, f) {\n  ${lines.join('\n  ')}\n};`)(prefixes, hex) as FieldsWriter;
}

export const utf8 = (s: string): Uint8Array => encoder.encode(s);

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
