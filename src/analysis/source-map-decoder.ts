/**
 * Source Map v3 (ECMA-426) decoding: a map's JSON to a table of mappings, and the look-up of a
 * generated position's original one. Regular maps and index maps (`sections`) are read; a map of
 * another version, an index map whose sections name a `url`, or mappings that do not decode are
 * refused with a SourceMapError that says where.
 */

/** An original position: `source` resolved against `sourceRoot` and the map's own URL; line and column 0-based. */
export interface OriginalPosition {
  readonly source: string;
  readonly line: number;
  readonly column: number;
  /** The original name the map gives the mapping, if it gives one. */
  readonly name: string | undefined;
}

export interface DecodedSourceMap {
  /**
   * The original position of the generated one (line and column 0-based): that of the mapping at the
   * column or nearest before it on the same line, or undefined when there is none or it names no source.
   */
  originalPositionFor(line: number, column: number): OriginalPosition | undefined;
}

/** A source map that cannot be read: the message says what in it is wrong. */
export class SourceMapError extends Error {
  override readonly name = 'SourceMapError';
}

/**
 * Decodes `map` (the JSON text or the parsed value); `mapUrl` is the URL the map was read from (or
 * the script's, for an inline map), against which its sources are resolved.
 */
export function decodeSourceMap(map: string | unknown, mapUrl: string): DecodedSourceMap {
  let value = map;
  if (typeof map === 'string') {
    try {
      value = JSON.parse(map);
    } catch (e) {
      throw new SourceMapError(`not JSON: ${(e as Error).message}`);
    }
  }
  const json = object(value, 'the map');
  checkVersion(json);
  return 'sections' in json ? new IndexMap(json, mapUrl) : new RegularMap(json, mapUrl);
}

type Json = Record<string, unknown>;

function object(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SourceMapError(`${what} is not a JSON object`);
  return v as Json;
}

function checkVersion(json: Json): void {
  if (json.version !== 3) throw new SourceMapError(`version ${JSON.stringify(json.version)}: only version 3 is read`);
}

function stringArray(v: unknown, what: string, nullable: boolean): (string | null)[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new SourceMapError(`${what} is not an array`);
  for (const [i, s] of v.entries()) {
    if (typeof s !== 'string' && !(nullable && s === null)) throw new SourceMapError(`${what}[${i}] is not a string`);
  }
  return v as (string | null)[];
}

/** Per the specification: `sourceRoot` (with a '/' between) before the source, then resolved against the map's URL. */
function resolveSource(sourceRoot: string, source: string, mapUrl: string): string {
  const joined = sourceRoot === '' ? source : `${sourceRoot}${sourceRoot.endsWith('/') ? '' : '/'}${source}`;
  try {
    return new URL(joined, mapUrl).href;
  } catch {
    return joined; // neither the source nor the map's URL is a URL: keep the source as the map says it
  }
}

/** A segment's fields in the decoded table, five per mapping. */
const GEN_COLUMN = 0;
const SOURCE = 1;
const ORIGINAL_LINE = 2;
const ORIGINAL_COLUMN = 3;
const NAME = 4;
const FIELDS = 5;
/** Marks a segment without a source (1 field) or without a name (4 fields). */
const ABSENT = -1;

const BASE64_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64_DIGITS.length; i++) BASE64_VALUE[BASE64_DIGITS.charCodeAt(i)] = i;

const COMMA = 44;
const SEMICOLON = 59;
const VLQ_CONTINUES = 32;
/** A value and every running sum must fit in 32 signed bits, as the specification requires. */
const MAX_VALUE = 2 ** 31 - 1;
/** The largest value with its sign bit, and the scale of the last digit it may take (7 digits: 35 bits). */
const MAX_ENCODED = 2 * MAX_VALUE + 1;
const MAX_SCALE = 32 ** 6;

class RegularMap implements DecodedSourceMap {
  private readonly sources: (string | null)[];
  private readonly names: (string | null)[];
  /** FIELDS numbers per mapping, each generated line's mappings by column (ties in the map's order). */
  private readonly segments: Int32Array;
  /** Index (in mappings) of each generated line's first mapping; one more entry than lines. */
  private readonly lineStarts: Uint32Array;

  constructor(json: Json, mapUrl: string) {
    if (typeof json.mappings !== 'string') throw new SourceMapError('"mappings" is not a string');
    const sourceRoot = json.sourceRoot ?? '';
    if (typeof sourceRoot !== 'string') throw new SourceMapError('"sourceRoot" is not a string');
    this.sources = stringArray(json.sources, '"sources"', true).map((s) => (s === null ? null : resolveSource(sourceRoot, s, mapUrl)));
    this.names = stringArray(json.names, '"names"', false);
    [this.segments, this.lineStarts] = decodeMappings(json.mappings, this.sources.length, this.names.length);
  }

  originalPositionFor(line: number, column: number): OriginalPosition | undefined {
    if (line < 0 || line + 1 >= this.lineStarts.length) return undefined;
    // The last mapping of the line at or before `column`; the first of several at the same column.
    let lo = this.lineStarts[line]!;
    let hi = this.lineStarts[line + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid * FIELDS + GEN_COLUMN]! <= column) lo = mid + 1;
      else hi = mid;
    }
    let found = lo - 1;
    if (found < this.lineStarts[line]!) return undefined;
    const col = this.segments[found * FIELDS + GEN_COLUMN]!;
    while (found > this.lineStarts[line]! && this.segments[(found - 1) * FIELDS + GEN_COLUMN] === col) found--;
    const at = found * FIELDS;
    const source = this.segments[at + SOURCE]!;
    if (source === ABSENT) return undefined;
    const url = this.sources[source];
    if (url === null || url === undefined) return undefined;
    const name = this.segments[at + NAME]!;
    return { source: url, line: this.segments[at + ORIGINAL_LINE]!, column: this.segments[at + ORIGINAL_COLUMN]!, name: name === ABSENT ? undefined : (this.names[name] ?? undefined) };
  }
}

function decodeMappings(text: string, sources: number, names: number): [Int32Array, Uint32Array] {
  let segments = new Int32Array(FIELDS * 1024);
  let count = 0;
  const lineStarts = [0];
  let lineStart = 0;
  const fields = [0, 0, 0, 0, 0];
  // Running sums: the column restarts on each line, the others run through the whole string.
  let column = 0;
  let source = 0;
  let originalLine = 0;
  let originalColumn = 0;
  let name = 0;
  let sorted = true;
  let pos = 0;
  const end = text.length;
  for (;;) {
    const c = pos < end ? text.charCodeAt(pos) : SEMICOLON;
    if (c === SEMICOLON) {
      if (!sorted) sortLine(segments, lineStart, count);
      lineStarts.push((lineStart = count));
      column = 0;
      sorted = true;
      if (++pos > end) break;
      continue;
    }
    if (c === COMMA) {
      pos++;
      continue;
    }
    // One segment: up to five base64 VLQ values (5 bits a digit, low digit first, sign in the lowest bit).
    const at = pos;
    let n = 0;
    while (pos < end) {
      const next = text.charCodeAt(pos);
      if (next === COMMA || next === SEMICOLON) break;
      if (n === FIELDS) throw new SourceMapError(`"mappings" has a segment of more than 5 values at ${at}`);
      let value = 0;
      let scale = 1;
      let digit: number;
      do {
        if (pos === end) throw new SourceMapError(`"mappings" ends inside a value (at ${pos})`);
        const code = text.charCodeAt(pos++);
        digit = code < 128 ? BASE64_VALUE[code]! : -1;
        if (digit < 0) throw new SourceMapError(`"mappings" has ${JSON.stringify(text[pos - 1])} at ${pos - 1}, not a base64 digit`);
        value += (digit & 31) * scale;
        scale *= 32;
      } while ((digit & VLQ_CONTINUES) !== 0 && scale <= MAX_SCALE);
      if ((digit & VLQ_CONTINUES) !== 0 || value > MAX_ENCODED) throw new SourceMapError(`"mappings" has a value of more than 32 bits (ending at ${pos})`);
      fields[n++] = value % 2 === 1 ? -(value - 1) / 2 : value / 2;
    }
    if (n !== 1 && n !== 4 && n !== 5) throw new SourceMapError(`"mappings" has a segment of ${n} values at ${at} (1, 4 or 5 are valid)`);
    if (count * FIELDS === segments.length) {
      const grown = new Int32Array(segments.length * 2);
      grown.set(segments);
      segments = grown;
    }
    const s = count * FIELDS;
    const previous = column;
    column += fields[0]!;
    if (column < 0 || column > MAX_VALUE) throw outOfRange('the generated column', column, MAX_VALUE + 1, at);
    if (count > lineStart && column < previous) sorted = false;
    segments[s + GEN_COLUMN] = column;
    segments[s + SOURCE] = ABSENT;
    segments[s + NAME] = ABSENT;
    if (n >= 4) {
      source += fields[1]!;
      originalLine += fields[2]!;
      originalColumn += fields[3]!;
      if (source < 0 || source >= sources) throw outOfRange('the source', source, sources, at);
      if (originalLine < 0 || originalLine > MAX_VALUE) throw outOfRange('the original line', originalLine, MAX_VALUE + 1, at);
      if (originalColumn < 0 || originalColumn > MAX_VALUE) throw outOfRange('the original column', originalColumn, MAX_VALUE + 1, at);
      segments[s + SOURCE] = source;
      segments[s + ORIGINAL_LINE] = originalLine;
      segments[s + ORIGINAL_COLUMN] = originalColumn;
    }
    if (n === 5) {
      name += fields[4]!;
      if (name < 0 || name >= names) throw outOfRange('the name', name, names, at);
      segments[s + NAME] = name;
    }
    count++;
  }
  return [segments.slice(0, count * FIELDS), Uint32Array.from(lineStarts)];
}

function outOfRange(what: string, v: number, limit: number, at: number): SourceMapError {
  return new SourceMapError(`"mappings" gives ${what} ${v} at ${at}, outside 0..${limit - 1}`);
}

/** Orders one line's mappings [from, to) by generated column, keeping the map's order among equal columns. */
function sortLine(segments: Int32Array, from: number, to: number): void {
  const line = segments.slice(from * FIELDS, to * FIELDS);
  const order = Array.from({ length: to - from }, (_, i) => i).sort((a, b) => line[a * FIELDS]! - line[b * FIELDS]! || a - b);
  order.forEach((i, k) => segments.set(line.subarray(i * FIELDS, (i + 1) * FIELDS), (from + k) * FIELDS));
}

/** An index map: regular maps, each placed at an offset of the generated file. */
class IndexMap implements DecodedSourceMap {
  private readonly sections: { line: number; column: number; map: RegularMap }[] = [];

  constructor(json: Json, mapUrl: string) {
    if (!Array.isArray(json.sections)) throw new SourceMapError('"sections" is not an array');
    for (const [i, v] of json.sections.entries()) {
      const section = object(v, `section ${i}`);
      if ('url' in section) throw new SourceMapError(`section ${i} names a url: sections by reference are not supported`);
      const offset = object(section.offset, `section ${i}'s offset`);
      const { line, column } = offset;
      if (!Number.isSafeInteger(line) || !Number.isSafeInteger(column) || (line as number) < 0 || (column as number) < 0) {
        throw new SourceMapError(`section ${i}'s offset is not a line and column`);
      }
      const previous = this.sections[this.sections.length - 1];
      if (previous && (line as number) * 2 ** 31 + (column as number) < previous.line * 2 ** 31 + previous.column) {
        throw new SourceMapError(`section ${i} begins before section ${i - 1}`);
      }
      const map = object(section.map, `section ${i}'s map`);
      checkVersion(map);
      if ('sections' in map) throw new SourceMapError(`section ${i} is itself an index map`);
      this.sections.push({ line: line as number, column: column as number, map: new RegularMap(map, mapUrl) });
    }
  }

  originalPositionFor(line: number, column: number): OriginalPosition | undefined {
    // The last section that begins at or before the position.
    let lo = 0;
    let hi = this.sections.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.sections[mid]!;
      if (s.line < line || (s.line === line && s.column <= column)) lo = mid + 1;
      else hi = mid;
    }
    const s = this.sections[lo - 1];
    if (!s) return undefined;
    return s.map.originalPositionFor(line - s.line, line === s.line ? column - s.column : column);
  }
}
