import { JsonWriter } from '../export/json-text.js';
import { hex, utf8 } from '../export/text-writer.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { TraceEvent } from '../format/trace-event.js';
import { formatOffset } from './format-time.js';
import { printable } from './printable.js';

/** The numbers of a JSON line, in the order JSON.stringify writes an event's own keys. */
const NUMBER_KEYS = ['id', 'version', 'level', 'timestampNs', 'threadId', 'sequence'] as const;
const NUMBER_PREFIXES = NUMBER_KEYS.map((k) => utf8(`,"${k}":`));

/** Below this, whole nanoseconds are printed as seconds digit by digit (see seconds()). */
const EXACT_NS = 2 ** 52;

/**
 * The lines of `tracepipe dump`, written straight into one reused byte buffer. dump prints a line per
 * event, millions of them: building each line as strings and joining them into a batch kept enough
 * of them alive at every scavenge for the collector to promote hundreds of KB each time, and the old
 * space that grew from it (pooled, not returned, by Node 24's V8) made most of dump's peak RSS. The
 * text is the same as the string forms in the comments, byte for byte.
 */
export class DumpText extends JsonWriter {
  /**
   * `${formatOffset(ts)}  T${String(thread).padEnd(4)} #${String(seq).padEnd(8)} ${printable(provider)}/${printable(name)}  `
   * then `${printable(k)}=value` per field (values as JSON, bigints and bytes as strings, then printable), space-separated.
   */
  textLine(e: TraceEvent): void {
    this.seconds(e.timestampNs);
    this.ascii('  T');
    this.padded(e.threadId, 4);
    this.ascii(' #');
    this.padded(e.sequence, 8);
    this.u8(32);
    this.name(e.provider);
    this.u8(47);
    this.name(e.name);
    this.ascii('  ');
    this.members(e.fields, false);
    this.u8(10);
  }

  /** `${printable(stringify(e))}\n`: the event as JSON, bigints as decimal strings, bytes as hex. */
  jsonLine(e: TraceEvent): void {
    this.ascii('{"provider":');
    this.text(e.provider);
    this.ascii(',"name":');
    this.text(e.name);
    for (let i = 0; i < NUMBER_KEYS.length; i++) {
      this.raw(NUMBER_PREFIXES[i]!);
      this.number(e[NUMBER_KEYS[i]!]);
    }
    this.ascii(',"fields":{');
    this.members(e.fields, true);
    this.ascii('}}\n');
  }

  /**
   * `formatOffset(ns)`. Whole nanoseconds in [0, 2^52) are rounded to microseconds here: the double
   * ns / 1e9 is within 2^-53 of the true quotient, so its microseconds are within 0.0005 of
   * ns / 1000, whose fraction is a multiple of 0.001; only an exact tie (…500 ns) could round either
   * way, and it goes through toFixed.
   */
  private seconds(ns: number): void {
    const rest = ns % 1000;
    if (!(ns >= 0 && ns < EXACT_NS && rest !== 500 && Number.isInteger(ns))) return this.ascii(formatOffset(ns));
    const us = (ns - rest) / 1000 + (rest > 500 ? 1 : 0);
    const fraction = us % 1e6;
    const s = (us - fraction) / 1e6;
    let digits = 1;
    for (let m = s; m >= 10; m = Math.floor(m / 10)) digits++;
    this.ensure(12 + digits);
    for (let pad = 12 - 7 - digits; pad > 0; pad--) this.buf[this.pos++] = 32;
    this.integer(s);
    this.buf[this.pos++] = 46;
    let p = (this.pos += 6);
    for (let i = 0, n = fraction; i < 6; i++, n = Math.floor(n / 10)) this.buf[--p] = 48 + (n % 10);
  }

  /** `String(n).padEnd(width)` for a thread id or sequence number. */
  private padded(n: number, width: number): void {
    const start = this.pos;
    if ((n | 0) === n) this.integer(n);
    else this.double(n);
    this.ensure(width);
    while (this.pos - start < width) this.buf[this.pos++] = 32;
  }

  /** The fields in their own key order (integer-like names first), `k=v k=v` or, as JSON members, `"k":v,"k":v`. */
  private members(f: DecodedFields, json: boolean): void {
    const keys = Object.keys(f);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (i > 0) this.u8(json ? 44 : 32);
      if (json) this.text(k);
      else this.name(k);
      this.u8(json ? 58 : 61);
      this.value(f[k]!);
    }
  }

  /** A field value as JSON (a bigint as a decimal string, bytes as a hex string). */
  private value(v: DecodedFields[string]): void {
    switch (typeof v) {
      case 'number': return this.number(v);
      case 'boolean': return this.ascii(v ? 'true' : 'false');
      case 'string': return this.text(v);
      case 'bigint': return this.ascii(`"${v}"`);
      default: return this.ascii(`"${hex(v)}"`);
    }
  }

  /** A provider, event or field name: printable ASCII byte by byte, anything else through printable(). */
  private name(s: string): void {
    this.ensure(s.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return this.utf8(printable(s));
      buf[p++] = c;
    }
    this.pos = p;
  }

  /** JSON's own escapes leave DEL, the C1 controls and the bidirectional ones as they are: these too are escaped, still as JSON. */
  protected override quoted(s: string): void {
    this.utf8(printable(JSON.stringify(s)));
  }
}
