import { MAX_VARINT_BYTES } from './varint.js';

const encoder = new TextEncoder();

/** A growable little-endian byte buffer; writers reuse one and take() what they produced. */
export class ByteWriter {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(initial = 64 * 1024) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }
  u64(v: bigint): void {
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, v), true);
    this.pos += 8;
  }
  /** Unsigned varint of a non-negative integer Number (≤ 2^53). */
  varint(n: number): void {
    this.ensure(MAX_VARINT_BYTES);
    const b = this.buf;
    let p = this.pos;
    while (n >= 128) {
      b[p++] = (n & 127) | 128;
      n = Math.floor(n / 128);
    }
    b[p++] = n;
    this.pos = p;
  }
  string(s: string): void {
    if (s.length <= 42) {
      // At most 126 UTF-8 bytes: the length fits one byte, and the text is encoded in place, without
      // an array per string (names and field names are short; a type of 1,024 fields writes 1,024).
      this.ensure(1 + s.length * 3);
      if (this.shortAscii(s)) return;
      const { written } = encoder.encodeInto(s, this.buf.subarray(this.pos + 1));
      this.buf[this.pos] = written;
      this.pos += 1 + written;
      return;
    }
    const bytes = encoder.encode(s);
    this.varint(bytes.length);
    this.bytes(bytes);
  }
  /**
   * A short string copied byte by byte if it is all ASCII (nearly every name and field of a trace):
   * cheaper than encodeInto and the subarray it needs. False, with nothing written, otherwise.
   */
  private shortAscii(s: string): boolean {
    const b = this.buf;
    const start = this.pos + 1;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      b[start + i] = c;
    }
    b[this.pos] = s.length;
    this.pos = start + s.length;
    return true;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Copies out everything written and resets (the buffer is kept for reuse). */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.pos);
    this.pos = 0;
    return out;
  }
}
