import { type BulkFlush, NumberSection, StringSection } from './snapshot-sections.js';

/** V8's `snapshot` object: the field lists and type names (meta) and the declared counts. */
export interface SnapshotHeader {
  readonly meta: {
    readonly node_fields: readonly string[];
    readonly node_types: readonly unknown[];
    readonly edge_fields: readonly string[];
    readonly edge_types: readonly unknown[];
    readonly location_fields?: readonly string[];
    readonly [other: string]: unknown;
  };
  readonly node_count: number;
  readonly edge_count: number;
  readonly [other: string]: unknown;
}

/** A record has at most this many fields: it bounds a bulk payload (the native transcoder's too). */
const MAX_FIELDS = 64;
/** V8's header is a few KB; a longer one is not V8's. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** V8 writes about ten top-level keys; each one seen is remembered (a key twice is an error). */
const MAX_KEYS = 256;

/** A non-empty list of field names, as V8's meta gives them. */
export function isFieldList(x: unknown): x is string[] {
  return Array.isArray(x) && x.length > 0 && x.length <= MAX_FIELDS && x.every((s) => typeof s === 'string');
}

/** How wide the records are, from the header's field lists; a column is -1 when absent. */
export interface SnapshotLayout {
  readonly nodeWidth: number;
  readonly edgeWidth: number;
  readonly toNodeColumn: number;
  readonly locationWidth: number;
  readonly objectIndexColumn: number;
}

/**
 * The `snapshot` object's JSON text, parsed and checked: its header and record layout, or why it is
 * not one. Both routes read the header here (the native transcoder hands its text over).
 */
export function readSnapshotHeader(json: string): { header: SnapshotHeader; layout: SnapshotLayout } | string {
  let h: SnapshotHeader;
  try {
    h = JSON.parse(json) as SnapshotHeader;
  } catch {
    return 'the snapshot header is not valid JSON';
  }
  const m = h?.meta;
  if (!m || !isFieldList(m.node_fields) || !isFieldList(m.edge_fields) || !Number.isInteger(h.node_count) || !Number.isInteger(h.edge_count)) {
    return 'the snapshot header lacks its field lists or counts';
  }
  const lf = isFieldList(m.location_fields) ? m.location_fields : ['object_index'];
  return {
    header: h,
    layout: {
      nodeWidth: m.node_fields.length,
      edgeWidth: m.edge_fields.length,
      toNodeColumn: m.edge_fields.indexOf('to_node'),
      locationWidth: lf.length,
      objectIndexColumn: lf.indexOf('object_index'),
    },
  };
}

/** Where the parser's output goes, section by section, as V8 writes them. */
export interface SnapshotOutput {
  /** The header, parsed; its JSON text is `json`. */
  header(h: SnapshotHeader, json: string): void;
  nodes: BulkFlush;
  edges: BulkFlush;
  locations: BulkFlush;
  /** Byte offset and length in the strings stream. */
  strings: BulkFlush;
}

export interface ParseTotals {
  readonly nodes: number;
  readonly edges: number;
  readonly locations: number;
  readonly strings: number;
  readonly stringBytes: number;
  /** Numbers in sections not carried (allocation tracking: trace_function_infos, trace_tree, samples). */
  readonly skippedValues: number;
}

/** Nothing read. */
export const NO_TOTALS: ParseTotals = { nodes: 0, edges: 0, locations: 0, strings: 0, stringBytes: 0, skippedValues: 0 };

const enum Mode {
  Start,
  ExpectKey,
  Key,
  ExpectColon,
  Capture,
  Skip,
  ExpectArray,
  Numbers,
  StringsBetween,
  StringChars,
  StringEscape,
  StringHex,
  Done,
  Failed,
}

const enum Ch {
  Quote = 34,
  Comma = 44,
  Colon = 58,
  Backslash = 92,
  OpenBracket = 91,
  CloseBracket = 93,
  OpenBrace = 123,
  CloseBrace = 125,
  Zero = 48,
  Nine = 57,
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** UTF-8 of the text chunks the inspector hands out, for the byte parser. */
const utf8 = new TextEncoder();

/**
 * A push parser for V8's heap snapshot JSON, fed as V8 produces it: UTF-8 bytes (the native addon's
 * chunks, `push`) or text (the inspector's chunks, `pushText`, encoded to UTF-8 first, so both routes
 * run the same byte loop). It keeps only what it must (the small `snapshot` header, one string being
 * decoded, one bulk payload per section) and never the document: V8's JSON for millions of objects
 * is hundreds of MB and may be longer than V8's maximum string length. Top-level keys may come in any
 * order, except that `snapshot` (whose field lists say how wide a node, edge and location are) must
 * come before the numeric sections, as V8 writes it. `strings` comes last in V8's output; its ids are
 * only referenced before then.
 */
export class SnapshotJsonParser {
  private mode = Mode.Start;
  private key = '';
  /** Capture/Skip: nesting depth, whether inside a string, whether the last char was a backslash. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private inNumber = false;
  private captured: number[] = [];
  private hex = 0;
  private hexDigits = 0;
  private numbers: NumberSection | undefined;
  private nodes: NumberSection | undefined;
  private edges: NumberSection | undefined;
  private locations: NumberSection | undefined;
  private readonly strings: StringSection;
  private skipped = 0;
  private seen = new Set<string>();
  /** pushText: a high surrogate that ended the last chunk, kept for the low one that starts the next. */
  private pendingHigh = '';
  private scratch = new Uint8Array(0);
  error: string | undefined;

  constructor(private readonly out: SnapshotOutput) {
    this.strings = new StringSection(out.strings);
  }

  get done(): boolean {
    return this.mode === Mode.Done;
  }

  /** Progress so far (complete once `finish` returned without error). */
  get totals(): ParseTotals {
    return {
      nodes: this.nodes?.records ?? 0,
      edges: this.edges?.records ?? 0,
      locations: this.locations?.records ?? 0,
      strings: this.strings.count,
      stringBytes: this.strings.bytes,
      skippedValues: this.skipped,
    };
  }

  private fail(message: string): void {
    this.error ??= message;
    this.mode = Mode.Failed;
  }

  /** The next bytes of the JSON, cut anywhere (UTF-8 inside strings is carried as it is). */
  push(chunk: Uint8Array): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      const mode = this.mode;
      if (mode === Mode.Numbers) i = this.numbersRun(chunk, i);
      else if (mode === Mode.StringChars) i = this.stringRun(chunk, i);
      else if (mode === Mode.Failed) return;
      else this.step(chunk[i++]!);
    }
  }

  /** The next characters of the JSON, cut anywhere, even between the halves of a surrogate pair. */
  pushText(chunk: string): void {
    let text = this.pendingHigh + chunk;
    this.pendingHigh = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pendingHigh = text.slice(-1);
      text = text.slice(0, -1);
    }
    // At most 3 UTF-8 bytes per UTF-16 unit; V8's JSON is ASCII, one byte each.
    if (this.scratch.length < text.length * 3) this.scratch = new Uint8Array(text.length * 3);
    const { written } = utf8.encodeInto(text, this.scratch);
    this.push(this.scratch.subarray(0, written));
  }

  /** Nodes, edges and locations: their section reads its own digits. */
  private numbersRun(chunk: Uint8Array, i: number): number {
    const section = this.numbers!;
    i = section.scan(chunk, i);
    if (section.error) {
      this.fail(section.error);
      return chunk.length;
    }
    if (section.closed) this.mode = Mode.ExpectKey;
    return i;
  }

  /** The strings section's error, if any, fails the parse. */
  private stringsFailed(): boolean {
    if (!this.strings.error) return false;
    this.fail(this.strings.error);
    return true;
  }

  /** Plain bytes of a string in the strings section, until a quote or a backslash: copied as they are. */
  private stringRun(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    const start = i;
    while (i < n && chunk[i] !== Ch.Quote && chunk[i] !== Ch.Backslash) i++;
    this.strings.raw(chunk, start, i);
    if (this.stringsFailed() || i === n) return n;
    if (chunk[i] === Ch.Quote) {
      this.strings.endString();
      if (this.stringsFailed()) return n;
      this.mode = Mode.StringsBetween;
    } else this.mode = Mode.StringEscape;
    return i + 1;
  }

  private step(c: number): void {
    switch (this.mode) {
      case Mode.Done:
        if (!isSpace(c)) this.fail('data after the end of the snapshot JSON');
        return;
      case Mode.Start:
        if (isSpace(c)) return;
        if (c !== Ch.OpenBrace) return this.fail('the snapshot is not a JSON object');
        this.mode = Mode.ExpectKey;
        return;
      case Mode.ExpectKey:
        if (isSpace(c) || c === Ch.Comma) return;
        if (c === Ch.CloseBrace) {
          this.mode = Mode.Done;
          return;
        }
        if (c !== Ch.Quote) return this.fail(`unexpected '${String.fromCharCode(c)}' where a key belongs`);
        this.key = '';
        this.mode = Mode.Key;
        return;
      case Mode.Key:
        if (c === Ch.Quote) {
          this.mode = Mode.ExpectColon;
          return;
        }
        if (c === Ch.Backslash || this.key.length > 64) return this.fail('unexpected top-level key');
        this.key += String.fromCharCode(c);
        return;
      case Mode.ExpectColon:
        if (isSpace(c)) return;
        if (c !== Ch.Colon) return this.fail(`expected ':' after "${this.key}"`);
        return this.startValue();
      case Mode.Capture:
      case Mode.Skip:
        return this.generic(c);
      case Mode.ExpectArray:
        if (isSpace(c)) return;
        if (c !== Ch.OpenBracket) return this.fail(`"${this.key}" is not an array`);
        this.mode = this.key === 'strings' ? Mode.StringsBetween : Mode.Numbers;
        return;
      case Mode.StringsBetween:
        if (isSpace(c) || c === Ch.Comma) return;
        if (c === Ch.Quote) {
          this.mode = Mode.StringChars;
          return;
        }
        if (c === Ch.CloseBracket) {
          this.strings.finish();
          this.mode = Mode.ExpectKey;
          return;
        }
        return this.fail('the strings section holds something other than strings');
      case Mode.StringEscape:
        return this.escape(c);
      case Mode.StringHex: {
        const h = hexValue(c);
        if (h < 0) return this.fail('bad \\u escape in a string');
        this.hex = this.hex * 16 + h;
        if (++this.hexDigits === 4) {
          this.strings.unit(this.hex);
          if (!this.stringsFailed()) this.mode = Mode.StringChars;
        }
        return;
      }
    }
  }

  private escape(c: number): void {
    let unit: number;
    switch (c) {
      case 110: unit = 10; break; // n
      case 116: unit = 9; break; // t
      case 114: unit = 13; break; // r
      case 98: unit = 8; break; // b
      case 102: unit = 12; break; // f
      case 117: // u
        this.hex = 0;
        this.hexDigits = 0;
        this.mode = Mode.StringHex;
        return;
      case Ch.Quote:
      case Ch.Backslash:
      case 47: // '/'
        unit = c;
        break;
      default:
        return this.fail(`bad escape '\\${String.fromCharCode(c)}' in a string`);
    }
    this.strings.unit(unit);
    if (!this.stringsFailed()) this.mode = Mode.StringChars;
  }

  private startValue(): void {
    const key = this.key;
    if (this.seen.has(key)) return this.fail(`"${key}" appears twice`);
    if (this.seen.size >= MAX_KEYS) return this.fail(`the snapshot has more than ${MAX_KEYS} top-level keys`);
    this.seen.add(key);
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.inNumber = false;
    if (key === 'snapshot') {
      this.captured = [];
      this.mode = Mode.Capture;
      return;
    }
    const section = key === 'nodes' ? this.nodes : key === 'edges' ? this.edges : key === 'locations' ? this.locations : undefined;
    if (key === 'nodes' || key === 'edges' || key === 'locations') {
      if (!section) return this.fail(`"${key}" comes before the snapshot header that describes it`);
      this.numbers = section;
      this.mode = Mode.ExpectArray;
      return;
    }
    this.mode = key === 'strings' ? Mode.ExpectArray : Mode.Skip;
  }

  /**
   * Any JSON value, character by character: captured (the header) or skipped (sections not
   * carried, counting their numbers). Ends after the closing bracket that returns to depth 0.
   */
  private generic(c: number): void {
    const capture = this.mode === Mode.Capture;
    if (capture && this.captured.length >= MAX_HEADER_BYTES) return this.fail('the snapshot header is longer than 1 MiB');
    if (this.inString) {
      if (capture) this.captured.push(c);
      if (this.escaped) this.escaped = false;
      else if (c === Ch.Backslash) this.escaped = true;
      else if (c === Ch.Quote) this.inString = false;
      return;
    }
    if (this.depth === 0 && (c === Ch.Comma || c === Ch.CloseBrace)) {
      // A scalar value ended; its comma (or the document's closing brace) follows it.
      if (capture) return this.fail(`"${this.key}" is not an object`);
      this.mode = c === Ch.Comma ? Mode.ExpectKey : Mode.Done;
      return;
    }
    if (capture) this.captured.push(c);
    const digit = c >= Ch.Zero && c <= Ch.Nine;
    if (digit && !this.inNumber && !capture) this.skipped++;
    this.inNumber = digit || (this.inNumber && (c === 46 || c === 101 || c === 69 || c === 43 || c === 45));
    if (c === Ch.Quote) this.inString = true;
    else if (c === Ch.OpenBrace || c === Ch.OpenBracket) this.depth++;
    else if (c === Ch.CloseBrace || c === Ch.CloseBracket) {
      if (--this.depth < 0) return this.fail(`unbalanced "${this.key}"`);
      if (this.depth === 0) this.endGeneric();
    }
  }

  private endGeneric(): void {
    const wasCapture = this.mode === Mode.Capture;
    this.mode = Mode.ExpectKey;
    if (!wasCapture) return;
    const json = new TextDecoder().decode(Uint8Array.from(this.captured));
    this.captured = [];
    const read = readSnapshotHeader(json);
    if (typeof read === 'string') return this.fail(read);
    const { nodeWidth, edgeWidth, toNodeColumn, locationWidth, objectIndexColumn } = read.layout;
    this.nodes = new NumberSection('nodes', nodeWidth, -1, nodeWidth, this.out.nodes);
    this.edges = new NumberSection('edges', edgeWidth, toNodeColumn, nodeWidth, this.out.edges);
    this.locations = new NumberSection('locations', locationWidth, objectIndexColumn, nodeWidth, this.out.locations);
    this.out.header(read.header, json);
  }

  /** Call when V8 has written everything: the document must be complete. */
  finish(): void {
    if (this.mode === Mode.Failed) return;
    if (this.pendingHigh) this.push(utf8.encode(this.pendingHigh));
    if (this.mode !== Mode.Done) return this.fail('the snapshot JSON ended early');
    if (!this.nodes) this.fail('the snapshot has no header');
  }
}
