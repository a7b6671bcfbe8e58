import { basename } from 'node:path';
import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { crc32 } from './crc32.js';
import { TraceFormatError } from './format-error.js';

/**
 * The stream header: `TPTRACE\0`, u16 major, u16 minor, u32 length, a JSON document, u32 CRC-32 of
 * everything after the magic. JSON because it is written once and must grow without breaking readers.
 */
export const MAGIC = new Uint8Array([0x54, 0x50, 0x54, 0x52, 0x41, 0x43, 0x45, 0x00]); // "TPTRACE\0"
export const FORMAT_MAJOR = 1;
export const FORMAT_MINOR = 2;
const MAX_HEADER_JSON = 1 << 20;

export interface ClockSync {
  /** Wall clock (ns since the Unix epoch, as a decimal string) at the trace origin. */
  readonly wallClockNs: string;
  /** The process monotonic clock (ns, decimal string) at the trace origin; event timestamps count from here. */
  readonly monotonicNs: string;
}

export interface TraceHeader {
  readonly formatMajor: number;
  readonly formatMinor: number;
  readonly pid: number;
  readonly processTitle: string;
  readonly argv: readonly string[];
  readonly execArgv: readonly string[];
  readonly nodeVersion: string;
  readonly tracepipeVersion: string;
  readonly platform: string;
  readonly arch: string;
  readonly hostname: string;
  /** Random per process (absent in older traces): what OTLP's trace and span ids are derived from. */
  readonly idSeed?: string;
  readonly clock: ClockSync;
  readonly session: {
    readonly id: number;
    readonly providers: string;
    readonly bufferingMode: string;
    readonly bufferSizeMB: number;
  };
}

export type HeaderInfo = Omit<TraceHeader, 'formatMajor' | 'formatMinor'>;

export function encodeHeader(info: HeaderInfo, out: ByteWriter): void {
  const json = new TextEncoder().encode(JSON.stringify(info));
  out.bytes(MAGIC);
  const start = out.pos;
  out.u16(FORMAT_MAJOR);
  out.u16(FORMAT_MINOR);
  out.u32(json.length);
  out.bytes(json);
  out.u32(crc32(out.buf.subarray(start, out.pos)));
}

/** Bytes needed before the header length is known. */
export const HEADER_PREFIX = 16;

/**
 * Checks as much of the fixed prefix as arrived (a stream may end inside it): the magic, then the
 * major version once it is complete.
 */
export function checkPrefix(prefix: Uint8Array): void {
  for (let i = 0; i < Math.min(prefix.length, MAGIC.length); i++) {
    if (prefix[i] !== MAGIC[i]) throw new TraceFormatError('not-a-trace', 'not a tracepipe trace (bad magic number)', 0);
  }
  if (prefix.length < 12) return;
  const r = new ByteReader(prefix, 8);
  const major = r.u16();
  const minor = r.u16();
  if (major > FORMAT_MAJOR) {
    throw new TraceFormatError('unsupported-version', `trace format ${major}.${minor} is newer than this reader supports (${FORMAT_MAJOR}.x); upgrade tracepipe`, 8);
  }
  if (major < 1) throw new TraceFormatError('not-a-trace', `not a tracepipe trace (format version ${major}.${minor})`, 8);
}

/** Returns the header's total size once `HEADER_PREFIX` bytes are available. */
export function headerSize(prefix: Uint8Array): number {
  checkPrefix(prefix);
  const len = new ByteReader(prefix, 12).u32();
  if (len > MAX_HEADER_JSON) throw new TraceFormatError('corrupt', `corrupt trace: header length ${len} is implausible`, 12);
  return HEADER_PREFIX + len + 4;
}

export function decodeHeader(bytes: Uint8Array): TraceHeader {
  const size = headerSize(bytes);
  if (bytes.length < size) throw new TraceFormatError('truncated', 'truncated trace: the header is incomplete', bytes.length);
  const r = new ByteReader(bytes, 8, size);
  const major = r.u16();
  const minor = r.u16();
  const len = r.u32();
  const json = r.bytes(len);
  const crc = r.u32();
  if (crc !== crc32(bytes.subarray(8, HEADER_PREFIX + len))) throw new TraceFormatError('corrupt', 'corrupt trace: header checksum mismatch', 8);
  let info: unknown;
  try {
    info = JSON.parse(new TextDecoder().decode(json));
  } catch {
    throw new TraceFormatError('corrupt', 'corrupt trace: header is not valid JSON', HEADER_PREFIX);
  }
  return { ...checkHeaderInfo(info), formatMajor: major, formatMinor: minor };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isDecimal = (v: unknown): v is string => isString(v) && /^-?\d{1,30}$/.test(v);

/** What each header key must hold; a newer minor version may add keys, never drop or retype these. */
const HEADER_FIELDS: Readonly<Record<string, [(v: unknown) => boolean, string]>> = {
  pid: [isNumber, 'a number'],
  processTitle: [isString, 'a string'],
  argv: [isStringList, 'a list of strings'],
  execArgv: [isStringList, 'a list of strings'],
  nodeVersion: [isString, 'a string'],
  tracepipeVersion: [isString, 'a string'],
  platform: [isString, 'a string'],
  arch: [isString, 'a string'],
  hostname: [isString, 'a string'],
  clock: [(v) => isObject(v) && isDecimal(v.wallClockNs) && isDecimal(v.monotonicNs), 'an object of decimal strings wallClockNs and monotonicNs'],
  session: [
    (v) => isObject(v) && isNumber(v.id) && isString(v.providers) && isString(v.bufferingMode) && isNumber(v.bufferSizeMB),
    'an object with id, providers, bufferingMode and bufferSizeMB',
  ],
};

/** Tools print header fields as they are: a header that lacks one, or has one of the wrong type, is refused here. */
function checkHeaderInfo(info: unknown): HeaderInfo {
  if (!isObject(info)) throw new TraceFormatError('corrupt', 'corrupt trace: header is not an object', HEADER_PREFIX);
  for (const [key, [valid, what]] of Object.entries(HEADER_FIELDS)) {
    if (!Object.hasOwn(info, key)) throw new TraceFormatError('corrupt', `corrupt trace: header has no '${key}'`, HEADER_PREFIX);
    if (!valid(info[key])) throw new TraceFormatError('corrupt', `corrupt trace: header '${key}' is not ${what}`, HEADER_PREFIX);
  }
  return info as unknown as HeaderInfo;
}

/** What a process is called on a timeline: its script and arguments (the full command line is in the metadata), or its title. */
export function processLabel(h: TraceHeader): string {
  const [, script, ...args] = h.argv;
  return script ? [basename(script), ...args].join(' ') : h.processTitle;
}
