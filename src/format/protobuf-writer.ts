import { ByteWriter } from './byte-writer.js';

/** Protobuf wire types. */
const VARINT = 0;
const I64 = 1;
const LEN = 2;

const TWO32 = 4294967296;

/**
 * The protobuf wire format, hand-written (it is small, and tracepipe keeps no dependencies): varint
 * and 64-bit fields, strings, and nested messages whose length is patched in when they close. A
 * nested message reserves one length byte and moves its content up in the rare case it grows past
 * 127 bytes, so small messages (nearly all of a trace) cost no extra bytes and no extra pass.
 */
export class ProtobufWriter extends ByteWriter {
  private readonly open: number[] = [];

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** A non-negative integer up to 2^53 (the hot path of every packet: one bounds check, no calls). */
  uint(field: number, n: number): void {
    if (this.pos + 16 > this.buf.length) this.ensure(16);
    const b = this.buf;
    let p = this.pos;
    let t = field * 8;
    while (t >= 128) {
      b[p++] = (t & 127) | 128;
      t >>>= 7;
    }
    b[p++] = t;
    if (n < 0x80000000) {
      while (n >= 128) {
        b[p++] = (n & 127) | 128;
        n >>>= 7;
      }
    } else {
      while (n >= 128) {
        b[p++] = (n % 128) | 128;
        n = Math.floor(n / 128);
      }
    }
    b[p++] = n;
    this.pos = p;
  }

  /** An int64: negative values take ten bytes (two's complement), as protobuf encodes them. */
  int(field: number, n: number): void {
    if (n >= 0) return this.uint(field, n);
    this.tag(field, VARINT);
    const hi = Math.floor(n / TWO32);
    this.varint64(hi >>> 0, (n - hi * TWO32) >>> 0);
  }

  /** A uint64 or int64 given exactly, as a bigint. */
  bigint(field: number, v: bigint): void {
    this.tag(field, VARINT);
    const u = BigInt.asUintN(64, v);
    this.varint64(Number(u >> 32n), Number(u & 0xffffffffn));
  }

  /** A uint64 that may pass 2^53: a big base plus a small offset, added without a bigint. */
  uintSum(field: number, baseHi: number, baseLo: number, offset: number): void {
    this.tag(field, VARINT);
    const lo = baseLo + offset;
    const carry = Math.floor(lo / TWO32);
    this.varint64((baseHi + carry) >>> 0, (lo - carry * TWO32) >>> 0);
  }

  private varint64(hi: number, lo: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (hi > 0 || lo > 127) {
      b[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | ((hi & 127) << 25)) >>> 0;
      hi >>>= 7;
    }
    b[p++] = lo;
    this.pos = p;
  }

  /**
   * A small message in one pass: `field` (under 16), then `head` (constant bytes made once, e.g. a
   * name and the value's tag) and an int64 varint value, under 128 bytes in all, so its length is one
   * byte. The hot path of debug annotations.
   */
  smallWithVarint(field: number, head: Uint8Array, n: number): void {
    let p = this.smallHead(field, head);
    const b = this.buf;
    if (n >= 0 && n < 0x80000000) {
      while (n >= 128) {
        b[p++] = (n & 127) | 128;
        n >>>= 7;
      }
      b[p++] = n;
    } else {
      const hi = Math.floor(n / TWO32);
      let h = hi >>> 0;
      let lo = (n - hi * TWO32) >>> 0;
      while (h > 0 || lo > 127) {
        b[p++] = (lo & 127) | 128;
        lo = ((lo >>> 7) | ((h & 127) << 25)) >>> 0;
        h >>>= 7;
      }
      b[p++] = lo;
    }
    this.smallEnd(p);
  }

  /** Like smallWithVarint, with a little-endian double as the value. */
  smallWithDouble(field: number, head: Uint8Array, v: number): void {
    const p = this.smallHead(field, head);
    this.view.setFloat64(p, v, true);
    this.smallEnd(p + 8);
  }

  private smallHead(field: number, head: Uint8Array): number {
    if (this.pos + head.length + 16 > this.buf.length) this.ensure(head.length + 16);
    const b = this.buf;
    let p = this.pos;
    b[p++] = field * 8 + LEN;
    p++; // the length, once known
    for (let i = 0; i < head.length; i++) b[p++] = head[i]!;
    return p;
  }

  private smallEnd(end: number): void {
    this.buf[this.pos + 1] = end - this.pos - 2;
    this.pos = end;
  }

  /** A fixed64 (eight bytes, little-endian), as Perfetto's flow ids are. */
  fixed64(field: number, v: bigint): void {
    this.tag(field, I64);
    this.u64(BigInt.asUintN(64, v));
  }

  /** A fixed64 of a big base (two uint32 halves) plus a non-negative offset below 2^53, added without a bigint. */
  fixed64Sum(field: number, baseHi: number, baseLo: number, offset: number): void {
    this.tag(field, I64);
    const lo = baseLo + offset;
    const carry = Math.floor(lo / TWO32);
    this.u32(lo - carry * TWO32);
    this.u32((baseHi + carry) >>> 0);
  }

  double(field: number, v: number): void {
    this.tag(field, I64);
    this.f64(v);
  }

  bool(field: number, v: boolean): void {
    this.tag(field, VARINT);
    this.u8(v ? 1 : 0);
  }

  str(field: number, s: string): void {
    this.tag(field, LEN);
    this.string(s);
  }

  /** A bytes field (an id, a raw payload). */
  blob(field: number, b: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(b.length);
    this.bytes(b);
  }

  begin(field: number): void {
    this.tag(field, LEN);
    this.ensure(1);
    this.open.push(this.pos);
    this.pos++;
  }

  end(): void {
    const at = this.open.pop()!;
    const len = this.pos - at - 1;
    if (len < 128) {
      this.buf[at] = len;
      return;
    }
    let size = 1;
    for (let n = len; n >= 128; n = Math.floor(n / 128)) size++;
    this.ensure(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    const end = this.pos + size - 1;
    this.pos = at;
    this.varint(len);
    this.pos = end;
  }

  /** Drops everything written; the buffer is kept. */
  clear(): void {
    this.pos = 0;
  }
}
