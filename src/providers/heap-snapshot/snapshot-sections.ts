import { writeVarint } from './bulk-codec.js';

/** Payload bytes per bulk event: small enough for the chunks of any budget of 256 KiB or more. */
export const BULK_BYTES = 12 * 1024;

/** Where a section's bulk payloads go: `first` is the index of the payload's first record (or byte). */
export type BulkFlush = (first: number, count: number, payload: Uint8Array) => void;

/**
 * One numeric section of V8's snapshot (nodes, edges or locations) as it streams by: values arrive
 * one at a time in field order and leave as varint records in bulk payloads of about BULK_BYTES, so
 * the section is never held whole. A field that V8 writes as an offset into the nodes array
 * (`to_node`, `object_index`) leaves as a node index, and must be a multiple of the node width.
 */
export class NumberSection {
  private readonly buf: Uint8Array;
  private pos = 0;
  private column = 0;
  /** Records completed so far; the staged ones start at `staged`. */
  records = 0;
  private staged = 0;
  error = '';

  constructor(
    readonly name: string,
    private readonly width: number,
    private readonly offsetColumn: number,
    private readonly nodeWidth: number,
    private readonly flush: BulkFlush,
  ) {
    if (!(width > 0)) throw new Error(`the snapshot declares no fields for ${name}`);
    this.buf = new Uint8Array(BULK_BYTES + width * 8);
  }

  /** False when the value cannot be right (`error` says why). */
  push(v: number): boolean {
    if (this.column === this.offsetColumn) {
      if (v % this.nodeWidth !== 0) {
        this.error = `${this.name} record ${this.records} points at node offset ${v}, not a multiple of the node width ${this.nodeWidth}`;
        return false;
      }
      v /= this.nodeWidth;
    }
    // Most values fit one byte (types, small counts and sizes): no call for those.
    if (v < 128) this.buf[this.pos++] = v;
    else this.pos = writeVarint(this.buf, this.pos, v);
    if (++this.column === this.width) {
      this.column = 0;
      this.records++;
      if (this.pos >= BULK_BYTES) this.send();
    }
    return true;
  }

  private send(): void {
    if (this.records === this.staged) return;
    this.flush(this.staged, this.records - this.staged, this.buf.subarray(0, this.pos));
    this.staged = this.records;
    this.pos = 0;
  }

  finish(): boolean {
    if (this.column !== 0) {
      this.error = `the ${this.name} section ends in the middle of a record`;
      return false;
    }
    this.send();
    return true;
  }
}

/**
 * The `strings` section: each string, decoded from JSON (UTF-16 code units), is written as a varint
 * byte length and its UTF-8, into one byte stream cut into bulk payloads at any byte, so a string of
 * any length fits. A lone surrogate becomes U+FFFD, as TextEncoder does.
 */
export class StringSection {
  private cur = new Uint8Array(1024);
  private curLen = 0;
  private high = 0;
  private readonly out = new Uint8Array(BULK_BYTES);
  private readonly head = new Uint8Array(8);
  private outLen = 0;
  /** Stream offset of out[0]. */
  private sent = 0;
  count = 0;

  constructor(private readonly flush: BulkFlush) {}

  get bytes(): number {
    return this.sent + this.outLen;
  }

  unit(c: number): void {
    if (this.high !== 0) {
      const h = this.high;
      this.high = 0;
      if (c >= 0xdc00 && c <= 0xdfff) return this.codePoint(0x10000 + ((h - 0xd800) << 10) + (c - 0xdc00));
      this.codePoint(0xfffd);
    }
    if (c >= 0xd800 && c <= 0xdbff) this.high = c;
    else if (c >= 0xdc00 && c <= 0xdfff) this.codePoint(0xfffd);
    else this.codePoint(c);
  }

  private codePoint(c: number): void {
    if (this.curLen + 4 > this.cur.length) {
      const next = new Uint8Array(this.cur.length * 2);
      next.set(this.cur);
      this.cur = next;
    }
    const b = this.cur;
    let p = this.curLen;
    if (c < 0x80) b[p++] = c;
    else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6);
      b[p++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    } else {
      b[p++] = 0xf0 | (c >> 18);
      b[p++] = 0x80 | ((c >> 12) & 0x3f);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    }
    this.curLen = p;
  }

  endString(): void {
    if (this.high !== 0) {
      this.high = 0;
      this.codePoint(0xfffd);
    }
    const end = writeVarint(this.head, 0, this.curLen);
    for (let i = 0; i < end; i++) this.byte(this.head[i]!);
    this.emit(this.cur, this.curLen);
    this.curLen = 0;
    this.count++;
  }

  private byte(b: number): void {
    this.out[this.outLen++] = b;
    if (this.outLen === this.out.length) this.send();
  }

  private emit(bytes: Uint8Array, length: number): void {
    if (length <= this.out.length - this.outLen - 1) {
      // The common case, a string that fits: a plain copy loop beats a subarray per string.
      const out = this.out;
      let o = this.outLen;
      for (let i = 0; i < length; i++) out[o++] = bytes[i]!;
      this.outLen = o;
      return;
    }
    for (let i = 0; i < length; i++) this.byte(bytes[i]!);
  }

  private send(): void {
    if (this.outLen === 0) return;
    this.flush(this.sent, this.outLen, this.out.subarray(0, this.outLen));
    this.sent += this.outLen;
    this.outLen = 0;
  }

  finish(): void {
    this.send();
  }
}
