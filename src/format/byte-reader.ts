import { TraceFormatError } from './format-error.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Bounds-checked little-endian reads over one block's bytes; overruns are 'corrupt' errors at `base + pos`. */
export class ByteReader {
  pos: number;
  readonly view: DataView;

  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
    /** Stream offset of buf[0], for error messages. */
    readonly base = 0,
  ) {
    this.pos = start;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  fail(what: string): never {
    throw new TraceFormatError('corrupt', `corrupt trace: ${what} at byte ${this.base + this.pos}`, this.base + this.pos);
  }
  /** A well-formed value a reader will not hold (see reader-limits.ts). */
  overLimit(what: string): never {
    throw new TraceFormatError('limit', `trace exceeds a reader limit: ${what} at byte ${this.base + this.pos}`, this.base + this.pos);
  }
  need(n: number, what: string): void {
    if (this.pos + n > this.end) this.fail(`${what} runs past the end of its block`);
  }
  get done(): boolean {
    return this.pos >= this.end;
  }

  u8(): number {
    this.need(1, 'byte');
    return this.buf[this.pos++]!;
  }
  u16(): number {
    this.need(2, 'u16');
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4, 'u32');
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8, 'f64');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  u64(): bigint {
    this.need(8, 'u64');
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  varint(): number {
    let result = 0;
    let mul = 1;
    const buf = this.buf;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) this.fail('varint runs past the end of its block');
      const b = buf[this.pos++]!;
      result += (b & 127) * mul;
      if (b < 128) return result;
      mul *= 128;
    }
    return this.fail('varint longer than 8 bytes');
  }
  bytes(n: number): Uint8Array {
    this.need(n, `${n}-byte field`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** A UTF-8 string of at most `maxBytes`. */
  string(maxBytes = Infinity): string {
    const n = this.varint();
    if (n > maxBytes) this.overLimit(`a ${n}-byte name (at most ${maxBytes})`);
    const b = this.bytes(n);
    try {
      return decoder.decode(b);
    } catch {
      return this.fail('invalid UTF-8 in a string');
    }
  }
}
