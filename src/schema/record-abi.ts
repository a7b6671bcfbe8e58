/**
 * The in-memory record a producer copies into its thread buffer (all offsets in bytes, little endian
 * as the host; records start 8-byte aligned):
 *
 *   0  u32  length of header + payload (the next record starts at this rounded up to 8)
 *   4  u32  thread-local event type index (0 = a metadata record describing a type)
 *   8  f64  timestamp: the producing thread's performance.now() in ms
 *  16  ...  payload (see payload-layout.ts)
 */
export const RECORD_HEADER_SIZE = 16;
export const METADATA_TYPE_INDEX = 0;

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
  }
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
   * Slow path: make room for a record of `size` bytes. Returns its byte offset, or -1 when the
   * attempt was dropped (and counted) or the session is gone (and the target detached).
   */
  reserve(size: number): number;
  /** An argument was refused before anything was written: count the attempt as dropped (reason invalid-argument). */
  reject(): void;
}
