import type { EventDescriptor } from './event-type.js';
import { requireBuiltin } from './this-thread.js';

/**
 * Node's Buffer and its functions as they were when tracepipe loaded: an application that replaces the
 * global Buffer (a polyfill) or patches its methods later changes nothing writers write.
 */
const { Buffer: NodeBuffer } = requireBuiltin('node:buffer') as typeof import('node:buffer');
const bufferOver = NodeBuffer.from.bind(NodeBuffer) as (buffer: ArrayBufferLike) => Buffer;
/** Node's UTF-8 encoder: `utf8Write.call(buffer, string, offset, room)` returns the bytes it wrote. */
export const utf8Write = NodeBuffer.prototype.utf8Write as (this: Buffer, s: string, offset: number, room: number) => number;

/**
 * The in-memory record a producer copies into its thread buffer (all offsets in bytes, little endian
 * as the host; records start 8-byte aligned):
 *
 *   0  u32  length of header + payload (the next record starts at this rounded up to 8)
 *   4  u32  thread-local event type index, or METADATA_TYPE_INDEX / METADATA_PART_TYPE_INDEX /
 *           SEQUENCE_GAP_TYPE_INDEX
 *   8  f64  timestamp: the producing thread's performance.now() in ms; in a metadata record, where
 *           its bytes start within the description (0 for a whole one)
 *  16  ...  payload (see payload-layout.ts); in a metadata record, bytes of the description: a
 *           varint type index, then the descriptor (format/metadata-codec.ts)
 *
 * A description larger than the room in a chunk is written as parts, in consecutive records of the
 * thread, each but the last marked METADATA_PART_TYPE_INDEX (chunk-scanner.ts puts them together).
 */
export const RECORD_HEADER_SIZE = 16;
/** A metadata record: the whole description of a type, or the last part of one. */
export const METADATA_TYPE_INDEX = 0;
/** A part of a description that continues in the thread's next record (type indexes never get this high). */
export const METADATA_PART_TYPE_INDEX = 0xffffffff;
/**
 * A record with no payload: an attempt the thread dropped while it held the chunk (an argument
 * refused, an event too large). A reader numbers a chunk's events from its first sequence number on,
 * one per event and one per gap.
 */
export const SEQUENCE_GAP_TYPE_INDEX = 0xfffffffe;

/**
 * x86 keeps stores in program order, so there a plain store of a record's end publishes it; elsewhere
 * writers publish with Atomics.store, a release (docs/BUFFERING.md, "Publishing").
 */
export const STRONG_ORDER = process.arch === 'x64' || process.arch === 'ia32';

export function align8(n: number): number {
  return (n + 7) & ~7;
}

/** Every typed view a generated writer stores through, all over one buffer. */
export class RecordViews {
  readonly u8: Uint8Array;
  readonly i8: Int8Array;
  readonly u16: Uint16Array;
  readonly i16: Int16Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
  readonly b64: BigInt64Array;
  /** Node's own UTF-8 encoder writes long strings through this (see utf8.ts, LONG_STRING). */
  readonly buf: Buffer;

  constructor(buffer: ArrayBufferLike) {
    this.u8 = new Uint8Array(buffer);
    this.i8 = new Int8Array(buffer);
    this.u16 = new Uint16Array(buffer);
    this.i16 = new Int16Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.f32 = new Float32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.b64 = new BigInt64Array(buffer);
    this.buf = bufferOver(buffer);
  }
}

/** What a writer tells its target about its event type: enough to describe the type before its first record. */
export interface RecordType extends EventDescriptor {
  readonly typeIndex: number;
}

/** One thread's window into one session's buffer: what a generated writer needs to copy a record. */
export interface RecordTarget extends RecordViews {
  /** Byte offset where the next record goes. */
  pos: number;
  /** Byte offset the next record must not cross. */
  end: number;
  /** u32 index of the word that publishes `pos` to the drain. */
  commitIndex: number;
  /** Sequence number the next attempt gets; every attempt, dropped ones too, advances it. */
  seq: number;
  /**
   * Per thread-local type index, 1 once a record of that type may follow without its description: the
   * drain has it already (from this thread's earlier records in the stream, or, in a ring, in the
   * chunk being written). Anything else sends the write down the slow path, which describes the type.
   */
  readonly described: Uint8Array;
  /**
   * Slow path: describe `type` if needed and make room for a record of `size` bytes. Returns its byte
   * offset, or -1 when the attempt was dropped (and counted) or the session is gone (and the target detached).
   */
  reserve(size: number, type: RecordType): number;
  /** An argument was refused before anything was written: count the attempt as dropped (reason invalid-argument). */
  reject(): void;
}
