import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { crc32 } from '../format/crc32.js';
import { tracepipeVersion } from '../session/version.js';
import { type Column, HeapGraph, type SectionKind, type SnapshotMeta, type SnapshotOrigin } from './heap-graph.js';
import { writeThroughTempFile } from '../sinks/private-file.js';

/** docs/GCDUMP.md describes this layout. */
const MAGIC = 'TPGCDUMP';
const MAJOR = 1;
const MINOR = 0;
const PREFIX = 24;
const MAX_HEADER = 64 * 1024 * 1024;

type ColumnType = 'u8' | 'u32' | 'f64';

interface SectionEntry {
  readonly section: SectionKind | 'strings';
  readonly field: string;
  readonly type: ColumnType;
  readonly length: number;
  readonly offset: number;
  readonly crc32: number;
}

interface DumpHeader {
  readonly format: string;
  readonly tracepipeVersion: string;
  readonly snapshot: SnapshotMeta;
  readonly origin: SnapshotOrigin;
  readonly counts: { readonly nodes: number; readonly edges: number; readonly locations: number; readonly strings: number };
  readonly sections: readonly SectionEntry[];
}

/** Not a gcdump file, a newer one, or a damaged one: the message says which, in one line. */
export class GcdumpFileError extends Error {
  override readonly name = 'GcdumpFileError';
}

function narrowest(c: Column): ColumnType {
  if (c instanceof Uint8Array) return 'u8';
  let max = 0;
  for (let i = 0; i < c.length; i++) if (c[i]! > max) max = c[i]!;
  return max < 256 ? 'u8' : max <= 0xffffffff ? 'u32' : 'f64';
}

function convert(c: Column, type: ColumnType): Column {
  const want = type === 'u8' ? Uint8Array : type === 'u32' ? Uint32Array : Float64Array;
  return c instanceof want ? c : new want(c);
}

const bytesOf = (c: Column): Uint8Array => new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/**
 * Writes the graph as a .gcdump: a header (JSON) then one little-endian column per field, each with
 * its CRC-32. It goes to a temporary name first and is renamed at the end, so a failure leaves no
 * partial dump under the requested name.
 */
export function writeGcdump(path: string, g: HeapGraph): number {
  if (endianness() !== 'LE') throw new GcdumpFileError('writing a .gcdump needs a little-endian machine');
  const columns: { section: SectionKind | 'strings'; field: string; data: Column }[] = [];
  for (const kind of ['nodes', 'edges', 'locations'] as const) {
    for (const [field, c] of g.columns[kind]) columns.push({ section: kind, field, data: convert(c, narrowest(c)) });
  }
  columns.push({ section: 'strings', field: 'bytes', data: g.stringBytes });
  columns.push({ section: 'strings', field: 'offsets', data: convert(g.stringOffsets, g.stringBytes.length <= 0xffffffff ? 'u32' : 'f64') });
  const typeOf = (c: Column): ColumnType => (c instanceof Uint8Array ? 'u8' : c instanceof Uint32Array ? 'u32' : 'f64');
  // Offsets depend on the header's length, which depends on the offsets' digits: place the sections
  // after a header sized with room to spare, then pad the real header to that size.
  const crcs = columns.map((c) => crc32(bytesOf(c.data)));
  const draft = (base: number): DumpHeader => {
    let offset = base;
    const sections = columns.map((c, i) => {
      const e: SectionEntry = { section: c.section, field: c.field, type: typeOf(c.data), length: c.data.length, offset, crc32: crcs[i]! };
      offset = align8(offset + c.data.byteLength);
      return e;
    });
    return {
      format: `tracepipe gcdump ${MAJOR}.${MINOR}`,
      tracepipeVersion: tracepipeVersion(),
      snapshot: g.snapshot,
      origin: g.origin,
      counts: { nodes: g.nodeCount, edges: g.edgeCount, locations: g.locationCount, strings: g.stringCount },
      sections,
    };
  };
  const sized = Buffer.from(JSON.stringify(draft(0)));
  const headerRoom = align8(sized.length + 64 + columns.length * 24);
  const header = Buffer.alloc(headerRoom, 0x20);
  const json = Buffer.from(JSON.stringify(draft(PREFIX + headerRoom)));
  if (json.length > headerRoom) throw new Error('gcdump header outgrew its room');
  json.copy(header);
  const prefix = Buffer.alloc(PREFIX);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(MAJOR, 8);
  prefix.writeUInt32LE(MINOR, 12);
  prefix.writeUInt32LE(headerRoom, 16);
  prefix.writeUInt32LE(crc32(header), 20);
  return writeThroughTempFile(path, (put) => {
    put(prefix);
    put(header);
    let size = prefix.length + header.length;
    for (const c of columns) {
      put(bytesOf(c.data));
      size += c.data.byteLength;
      const pad = align8(size) - size;
      if (pad) put(new Uint8Array(pad));
      size += pad;
    }
  });
}

/** Which columns to load (all when omitted): a report needs far fewer than an export. */
export type ColumnChoice = Partial<Record<SectionKind, readonly string[]>>;

function readExactly(fd: number, into: Uint8Array, position: number, path: string): void {
  let off = 0;
  while (off < into.length) {
    const n = readSync(fd, into, off, into.length - off, position + off);
    if (n === 0) throw new GcdumpFileError(`${path} is truncated (a section runs past the end of the file)`);
    off += n;
  }
}

/** Opens a dump and reads its header, checked; the caller closes the descriptor. */
function openGcdump(path: string): { fd: number; h: DumpHeader } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new GcdumpFileError(err.code === 'ENOENT' ? `no such file: ${path}` : `cannot open ${path}: ${err.message}`);
  }
  try {
    if (fstatSync(fd).isDirectory()) throw new GcdumpFileError(`${path} is a directory, not a .gcdump file`);
    const prefix = Buffer.alloc(PREFIX);
    const got = readSync(fd, prefix, 0, PREFIX, 0);
    if (got < PREFIX || prefix.toString('latin1', 0, 8) !== MAGIC) throw new GcdumpFileError(`${path} is not a tracepipe .gcdump file`);
    const major = prefix.readUInt32LE(8);
    if (major !== MAJOR) throw new GcdumpFileError(`${path} is a gcdump of format ${major}.x; this tracepipe reads ${MAJOR}.x`);
    const headerLength = prefix.readUInt32LE(16);
    if (headerLength > MAX_HEADER) throw new GcdumpFileError(`${path} is damaged (a header of ${headerLength} bytes)`);
    const header = Buffer.alloc(headerLength);
    readExactly(fd, header, PREFIX, path);
    if (crc32(header) !== prefix.readUInt32LE(20)) throw new GcdumpFileError(`${path} is damaged (its header fails its checksum)`);
    try {
      return { fd, h: JSON.parse(header.toString('utf8')) as DumpHeader };
    } catch {
      throw new GcdumpFileError(`${path} is damaged (its header is not JSON)`);
    }
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

const typedArrayOf = (s: SectionEntry) => (s.type === 'u8' ? Uint8Array : s.type === 'u32' ? Uint32Array : s.type === 'f64' ? Float64Array : undefined);

/**
 * One node field's values at a few nodes, without holding its column: the section is read in small
 * pieces, each checked into its checksum and dropped (a report names a few objects by V8 id; the
 * column would be one word per node at the analysis's peak).
 */
export function readNodeField(path: string, field: string, nodes: readonly number[]): number[] {
  const { fd, h } = openGcdump(path);
  try {
    const s = h.sections.find((x) => x.section === 'nodes' && x.field === field);
    if (!s) throw new GcdumpFileError(`${path} has no nodes field '${field}'`);
    const Type = typedArrayOf(s);
    if (!Type || s.length !== h.counts.nodes) throw new GcdumpFileError(`${path} is damaged (section nodes.${field})`);
    if (nodes.some((v) => !(v >= 0 && v < s.length))) throw new RangeError(`readNodeField: a node index past the ${s.length} nodes`);
    const piece = new Type(64 * 1024);
    const values = nodes.map(() => 0);
    const byStart = nodes.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
    let next = 0;
    let crc = 0;
    for (let first = 0; first < s.length; first += piece.length) {
      const count = Math.min(piece.length, s.length - first);
      const view = piece.subarray(0, count);
      readExactly(fd, bytesOf(view), s.offset + first * Type.BYTES_PER_ELEMENT, path);
      crc = crc32(bytesOf(view), crc);
      for (; next < byStart.length && byStart[next]![0] < first + count; next++) values[byStart[next]![1]] = view[byStart[next]![0] - first]!;
    }
    if (crc !== s.crc32) throw new GcdumpFileError(`${path} is damaged (section nodes.${field} fails its checksum)`);
    return values;
  } finally {
    closeSync(fd);
  }
}

export function readGcdump(path: string, choice?: ColumnChoice): HeapGraph {
  const { fd, h } = openGcdump(path);
  try {
    const loaded: Record<SectionKind, Map<string, Column>> = { nodes: new Map(), edges: new Map(), locations: new Map() };
    let stringBytes: Uint8Array | undefined;
    let stringOffsets: Uint32Array | Float64Array | undefined;
    for (const s of h.sections) {
      const wanted = s.section === 'strings' || !choice || (choice[s.section]?.includes(s.field) ?? false);
      if (!wanted) continue;
      const Type = typedArrayOf(s);
      if (!Type || !Number.isInteger(s.length) || s.length < 0) throw new GcdumpFileError(`${path} is damaged (section ${s.section}.${s.field})`);
      const data = new Type(s.length);
      readExactly(fd, bytesOf(data), s.offset, path);
      if (crc32(bytesOf(data)) !== s.crc32) throw new GcdumpFileError(`${path} is damaged (section ${s.section}.${s.field} fails its checksum)`);
      if (s.section === 'strings') {
        if (s.field === 'bytes') stringBytes = data as Uint8Array;
        else if (!(data instanceof Uint8Array)) stringOffsets = data;
      } else loaded[s.section].set(s.field, data);
    }
    if (!stringBytes || !stringOffsets || stringOffsets.length !== h.counts.strings + 1) throw new GcdumpFileError(`${path} is damaged (its strings are missing)`);
    const expect: Record<SectionKind, number> = { nodes: h.counts.nodes, edges: h.counts.edges, locations: h.counts.locations };
    for (const kind of ['nodes', 'edges', 'locations'] as const) {
      for (const [field, c] of loaded[kind]) if (c.length !== expect[kind]) throw new GcdumpFileError(`${path} is damaged (${kind}.${field} has ${c.length} values, not ${expect[kind]})`);
      for (const field of choice?.[kind] ?? []) if (!loaded[kind].has(field)) throw new GcdumpFileError(`${path} has no ${kind} field '${field}'`);
    }
    return new HeapGraph(h.snapshot, h.origin, h.counts.nodes, h.counts.edges, h.counts.locations, loaded, stringBytes, stringOffsets);
  } finally {
    closeSync(fd);
  }
}
