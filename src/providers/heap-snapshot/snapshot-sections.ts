import { writeVarint } from './bulk-codec.js';

/** Payload bytes per bulk event: small enough for the chunks of any budget of 256 KiB or more. */
export const BULK_BYTES = 12 * 1024;
/** Numbers are exact below 2^53; a larger one is an error, not a rounded value. */
const NUMBER_LIMIT = 2 ** 53;
/** The one string held while it is decoded: far longer than the names V8 writes into a snapshot. */
const MAX_STRING_BYTES = 64 * 1024 * 1024;

/** Where a section's bulk payloads go: `first` is the index of the payload's first record (or byte). */
export type BulkFlush = (first: number, count: number, payload: Uint8Array) => void;

/**
 * One numeric section of V8's snapshot (nodes, edges or locations) as it streams by: the digits of its
 * JSON array are read here, and values leave in field order as varint records in bulk payloads of
 * about BULK_BYTES, so the section is never held whole. A field that V8 writes as an offset into the
 * nodes array (`to_node`, `object_index`) leaves as a node index, and must be a multiple of the node width.
 */
export class NumberSection {
  private readonly buf: Uint8Array;
  private pos = 0;
  private column = 0;
  /** The number being read, when `inNumber`: a chunk may end inside it. */
  private value = 0;
  private inNumber = false;
  /** Records completed so far; the staged ones start at `staged`. */
  records = 0;
  private staged = 0;
  /** The array's closing bracket was read. */
  closed = false;
  /** Why the section cannot be right; scanning stops there. */
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

  /**
   * The hot loop: the array's digits, commas and newlines from chunk[i] (after its opening bracket)
   * until the chunk ends, the array closes (`closed`) or a byte does not belong (`error`); returns
   * the index after the last byte read. State lives in locals while it runs.
   */
  scan(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const buf = this.buf;
    const width = this.width;
    const offsetColumn = this.offsetColumn;
    const nodeWidth = this.nodeWidth;
    const perNode = 1 / nodeWidth;
    let v = this.value;
    let inNumber = this.inNumber;
    let pos = this.pos;
    let column = this.column;
    for (; i < n; i++) {
      let c = chunk[i]!;
      let digit = c - 48;
      if (digit >>> 0 < 10) {
        // A number's digits in a loop of their own: fewer branches per byte than one loop for all.
        v = v * 10 + digit;
        inNumber = true;
        while (++i < n && (digit = chunk[i]! - 48) >>> 0 < 10) v = v * 10 + digit;
        if (i === n) break;
        c = chunk[i]!;
      }
      if (inNumber) {
        if (v >= NUMBER_LIMIT) {
          this.error = `${this.name} record ${this.records} holds a number past 2^53 - 1`;
          break;
        }
        if (column === offsetColumn) {
          // A multiply, not a modulo, in the loop: exact for any offset below 2^51.
          const index = Math.round(v * perNode);
          if (index * nodeWidth !== v) {
            this.error = `${this.name} record ${this.records} points at node offset ${v}, not a multiple of the node width ${nodeWidth}`;
            break;
          }
          v = index;
        }
        // Most values fit one byte (types, small counts and sizes): no call for those.
        if (v < 128) buf[pos++] = v;
        else pos = writeVarint(buf, pos, v);
        v = 0;
        inNumber = false;
        if (++column === width) {
          column = 0;
          this.records++;
          if (pos >= BULK_BYTES) {
            this.pos = pos;
            this.send();
            pos = 0;
          }
        }
      }
      // Commas and V8's newlines first: nearly every byte that is not a digit is one of them.
      if (c === 44 || c === 10) continue;
      if (c === 93) {
        this.pos = pos;
        this.column = column;
        this.close();
        return i + 1;
      }
      if (c === 32 || c === 13 || c === 9) continue;
      this.error = `unexpected '${String.fromCharCode(c)}' in the ${this.name} section (only whole non-negative numbers belong there)`;
      break;
    }
    this.value = v;
    this.inNumber = inNumber;
    this.pos = pos;
    this.column = column;
    return i;
  }

  private send(): void {
    if (this.records === this.staged) return;
    this.flush(this.staged, this.records - this.staged, this.buf.subarray(0, this.pos));
    this.staged = this.records;
    this.pos = 0;
  }

  private close(): void {
    this.closed = true;
    if (this.column !== 0) this.error = `the ${this.name} section ends in the middle of a record`;
    else this.send();
  }
}

/**
 * The `strings` section: each string, decoded from JSON (raw UTF-8 bytes, and escapes as UTF-16 code
 * units), is written as a varint byte length and its UTF-8, into one byte stream cut into bulk
 * payloads at any byte, so a string of any length fits. A lone surrogate escape becomes U+FFFD, as
 * TextEncoder does.
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
  /** Why the section cannot be right: nothing more is added once set. */
  error = '';

  constructor(private readonly flush: BulkFlush) {}

  get bytes(): number {
    return this.sent + this.outLen;
  }

  /** Bytes start .. end-1 of `chunk`, UTF-8 taken as it is. */
  raw(chunk: Uint8Array, start: number, end: number): void {
    if (start === end) return;
    this.flushHigh();
    if (!this.reserve(end - start)) return;
    // Most strings are short names: a plain copy loop beats a subarray per string.
    const cur = this.cur;
    let p = this.curLen;
    for (let i = start; i < end; i++) cur[p++] = chunk[i]!;
    this.curLen = p;
  }

  /** One UTF-16 code unit of an escape (`\n`, `\uXXXX`): surrogate pairs are joined across two calls. */
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

  /** A high surrogate not followed by its low half has no UTF-8. */
  private flushHigh(): void {
    if (this.high === 0) return;
    this.high = 0;
    this.codePoint(0xfffd);
  }

  private reserve(length: number): boolean {
    if (this.error) return false;
    if (this.curLen + length > MAX_STRING_BYTES) {
      this.error = 'a string in the strings section is longer than 64 MiB';
      return false;
    }
    if (this.curLen + length <= this.cur.length) return true;
    const next = new Uint8Array(Math.max(this.cur.length * 2, this.curLen + length));
    next.set(this.cur.subarray(0, this.curLen));
    this.cur = next;
    return true;
  }

  private codePoint(c: number): void {
    if (!this.reserve(4)) return;
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
    this.flushHigh();
    if (this.error) return;
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
