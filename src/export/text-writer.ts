import { ByteWriter } from '../format/byte-writer.js';

const encoder = new TextEncoder();

// The text of recent doubles, by their bits (see TextWriter.double).
const doubleBits = new Float64Array(1);
const bitWords = new Uint32Array(doubleBits.buffer);
const keys = new Float64Array(1024);
const texts: Array<string | undefined> = new Array(1024).fill(undefined);


/**
 * Text written straight into bytes, for the text formats (JSON, CSV): converters write millions of
 * values, and building strings then encoding them would cost more than the rest of the conversion.
 */
export class TextWriter extends ByteWriter {
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
   * A double as JavaScript prints it (`String(n)`). That costs V8 about 200 ns (its number-string
   * cache does not serve values read from a DataView), more than the rest of an event; traces repeat
   * values a lot (constants, counters, enums), so the text of the last double in each of 1024 slots,
   * by its bits, is kept. (0 and -0 share a slot and a text: String(-0) is "0".)
   */
  double(n: number): void {
    doubleBits[0] = n;
    const slot = (bitWords[0]! ^ bitWords[1]! ^ (bitWords[1]! >>> 10)) & 1023;
    let text = texts[slot];
    if (keys[slot] !== n || text === undefined) {
      text = String(n);
      keys[slot] = n;
      texts[slot] = text;
    }
    this.ascii(text);
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
    // The three decimals digit by digit: a string per event would cost more than the digits.
    let f = ns - us * 1000;
    this.ensure(4);
    const buf = this.buf;
    const p = this.pos;
    buf[p] = 46;
    buf[p + 3] = 48 + (f % 10);
    f = (f / 10) | 0;
    buf[p + 2] = 48 + (f % 10);
    buf[p + 1] = 48 + ((f / 10) | 0);
    this.pos = p + 4;
  }

  /** Any text, as UTF-8. */
  utf8(s: string): void {
    this.ensure(s.length * 3);
    this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

}

export const utf8 = (s: string): Uint8Array => encoder.encode(s);

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}
