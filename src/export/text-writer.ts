import { ByteWriter } from '../format/byte-writer.js';

const encoder = new TextEncoder();

// The text of recent doubles, by their bits (see putDouble).
const doubleBits = new Float64Array(1);
const bitWords = new Uint32Array(doubleBits.buffer);
const keys = new Float64Array(1024);
const texts: Array<string | undefined> = new Array(1024).fill(undefined);

/** The two ASCII digits of each of 0 … 99: integers are written two digits a step. */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[2 * i] = 48 + Math.floor(i / 10);
  DIGIT_PAIRS[2 * i + 1] = 48 + (i % 10);
}

/**
 * The longest text of a number (`String(n)` of a double: a sign and 17 significant digits after
 * `0.00000`, or an exponent): code that reserves room once for several values reserves this each.
 */
export const MAX_NUMBER_TEXT = 25;
/** The longest text of microseconds() and putMicroseconds(): a sign, a number, three decimals. */
export const MAX_MICROSECONDS_TEXT = 1 + MAX_NUMBER_TEXT + 4;

/*
 * The put* functions write at b[p] and return where they ended, without checking room: the caller
 * reserves it first (ByteWriter.ensure) for several values at once. A converter writes ten or more
 * values and constants per event, and a room check and a `pos` update for each showed in its profile.
 */

/** Text known to be ASCII (numbers, punctuation). */
export function putAscii(b: Uint8Array, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
  return p;
}

/** Bytes made once (e.g. from `utf8(...)`), such as a type's constant prefix. */
export function putBytes(b: Uint8Array, p: number, src: Uint8Array): number {
  // A copy through set() costs a call that a loop over a few bytes does not.
  if (src.length > 24) {
    b.set(src, p);
    return p + src.length;
  }
  for (let i = 0; i < src.length; i++) b[p++] = src[i]!;
  return p;
}

/** Digits of `n` (0 ≤ n < 2^31) by comparisons: a division per digit showed in the converters' profiles. */
function digitCount(n: number): number {
  if (n < 100000) return n < 100 ? (n < 10 ? 1 : 2) : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  return n < 10000000 ? (n < 1000000 ? 6 : 7) : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
}

/** An integer-valued field (u8 … i32): 32-bit values two digits a step, without making a string. */
export function putInteger(b: Uint8Array, p: number, n: number): number {
  if (n < 0) {
    if (n < -0x7fffffff) return putAscii(b, p, String(n));
    b[p++] = 45; // '-'
    n = -n;
  } else if (n > 0x7fffffff) return putAscii(b, p, String(n));
  const end = p + digitCount(n);
  let q = end;
  while (n >= 100) {
    const r = n % 100;
    n = (n / 100) | 0;
    b[--q] = DIGIT_PAIRS[2 * r + 1]!;
    b[--q] = DIGIT_PAIRS[2 * r]!;
  }
  if (n >= 10) {
    b[--q] = DIGIT_PAIRS[2 * n + 1]!;
    b[--q] = DIGIT_PAIRS[2 * n]!;
  } else b[--q] = 48 + n;
  return end;
}

/**
 * A double as JavaScript prints it (`String(n)`). That costs V8 about 200 ns (its number-string
 * cache does not serve values read from a DataView), more than the rest of an event; traces repeat
 * values a lot (constants, counters, enums), so the text of the last double in each of 1024 slots,
 * by its bits, is kept. (0 and -0 share a slot and a text: String(-0) is "0".)
 */
export function putDouble(b: Uint8Array, p: number, n: number): number {
  doubleBits[0] = n;
  const slot = (bitWords[0]! ^ bitWords[1]! ^ (bitWords[1]! >>> 10)) & 1023;
  let text = texts[slot];
  if (keys[slot] !== n || text === undefined) {
    text = String(n);
    keys[slot] = n;
    texts[slot] = text;
  }
  return putAscii(b, p, text);
}

/** Nanoseconds as microseconds with exactly three decimals (Chrome's unit, no rounding). */
export function putMicroseconds(b: Uint8Array, p: number, ns: number): number {
  ns = Math.round(ns);
  if (ns < 0) {
    b[p++] = 45; // '-'
    ns = -ns;
  }
  const us = Math.floor(ns / 1000);
  p = putInteger(b, p, us);
  // The three decimals digit by digit: a string per event would cost more than the digits.
  const f = ns - us * 1000;
  const tens = (f / 10) | 0;
  b[p] = 46; // '.'
  b[p + 1] = 48 + ((tens / 10) | 0);
  b[p + 2] = 48 + (tens % 10);
  b[p + 3] = 48 + (f - tens * 10);
  return p + 4;
}

/**
 * Text written straight into bytes, for the text formats (JSON, CSV): converters write millions of
 * values, and building strings then encoding them would cost more than the rest of the conversion.
 */
export class TextWriter extends ByteWriter {
  /** Bytes made once (e.g. from `utf8(...)`), such as a type's constant prefix. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.pos = putBytes(this.buf, this.pos, b);
  }

  /** Text known to be ASCII (numbers, punctuation). */
  ascii(s: string): void {
    this.ensure(s.length);
    this.pos = putAscii(this.buf, this.pos, s);
  }

  /** An integer-valued field (u8 … i32); see putInteger. */
  integer(n: number): void {
    this.ensure(MAX_NUMBER_TEXT);
    this.pos = putInteger(this.buf, this.pos, n);
  }

  /** A double as JavaScript prints it; see putDouble. */
  double(n: number): void {
    this.ensure(MAX_NUMBER_TEXT);
    this.pos = putDouble(this.buf, this.pos, n);
  }

  /** Nanoseconds as microseconds with exactly three decimals; see putMicroseconds. */
  microseconds(ns: number): void {
    this.ensure(MAX_MICROSECONDS_TEXT);
    this.pos = putMicroseconds(this.buf, this.pos, ns);
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
