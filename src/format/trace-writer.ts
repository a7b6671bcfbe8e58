import type { EventDescriptor } from '../schema/event-type.js';
import { BLOCK_HEADER_SIZE, BlockKind, blockChecksum, END_OF_STREAM_PAYLOAD } from './block.js';
import { ByteWriter } from './byte-writer.js';
import { encodeDescriptor } from './metadata-codec.js';
import { OTLP_EXPORT_COUNTS, type OtlpExportStats } from './otlp-export-stats.js';
import { encodeHeader, type HeaderInfo } from './stream-header.js';
import { zigzag } from './varint.js';

/** Event header flags: a flag is set only when the value differs from the previous event's. */
export const EventFlag = {
  NewType: 1,
  NewThread: 2,
  SequenceJump: 4,
} as const;

export interface ThreadProgress {
  readonly threadId: number;
  /** The sequence number this thread's next attempt will get. */
  readonly nextSeq: number;
  /** Attempts this thread has dropped so far in this session. */
  readonly dropped: number;
}

/** One thread's drops by reason, in reason-code order (docs/FORMAT.md). */
export interface ThreadDropReasons {
  readonly threadId: number;
  readonly counts: readonly number[];
}

export interface StreamTotals {
  readonly events: number;
  readonly dropped: number;
  readonly endTimeNs: number;
  readonly maxLatenessNs: number;
  readonly threads: number;
  readonly eventTypes: number;
}

/**
 * Bytes out: encodes the header, metadata, events with compressed headers, sequence points and the
 * end-of-stream block into one reusable buffer; the caller take()s the bytes and sends them to a sink.
 */
export class TraceWriter {
  private readonly out = new ByteWriter(256 * 1024);
  private blockStart = -1;
  /**
   * Doubles from the start (NaN: none yet; the first event of every block sets both): timestamps are
   * ns past 2^31, and a field that starts as a small integer changes representation when it gets one,
   * deoptimising every function optimised for the old one.
   */
  private prevTs = NaN;
  private prevThread = -1;
  private prevType = -1;
  private prevSeq = NaN;
  /** An empty array, not undefined: the field keeps one type. */
  private src: Uint8Array = new Uint8Array(0);
  private src32: Int32Array<ArrayBufferLike> = new Int32Array(0);
  bytesTaken = 0;

  constructor(private readonly maxEventBlock = 64 * 1024) {}

  header(info: HeaderInfo): void {
    encodeHeader(info, this.out);
  }

  private openBlock(kind: number): void {
    const o = this.out;
    o.ensure(BLOCK_HEADER_SIZE);
    this.blockStart = o.pos;
    o.buf[o.pos] = kind;
    o.buf.fill(0, o.pos + 1, o.pos + BLOCK_HEADER_SIZE);
    o.pos += BLOCK_HEADER_SIZE;
  }

  private closeBlock(): void {
    if (this.blockStart < 0) return;
    const o = this.out;
    const payloadStart = this.blockStart + BLOCK_HEADER_SIZE;
    o.view.setUint32(this.blockStart + 4, o.pos - payloadStart, true);
    o.view.setUint32(this.blockStart + 8, blockChecksum(o.buf.subarray(this.blockStart), o.buf.subarray(payloadStart, o.pos)), true);
    this.blockStart = -1;
    this.prevThread = -1;
    this.prevType = -1;
  }

  metadata(typeId: number, d: EventDescriptor): void {
    this.closeBlock();
    this.openBlock(BlockKind.Metadata);
    this.out.varint(1);
    this.out.varint(typeId);
    encodeDescriptor(d, this.out);
    this.closeBlock();
  }

  /** Before an event: a new events block if none is open or the open one is full, and room for the event. */
  private makeRoom(tsNs: number, len: number): void {
    const o = this.out;
    if (this.blockStart < 0 || o.pos - this.blockStart > this.maxEventBlock) {
      this.closeBlock();
      this.openBlock(BlockKind.Events);
      o.varint(zigzag(tsNs));
      this.prevTs = tsNs;
    }
    o.ensure(48 + len);
  }

  /** Appends one event; its payload is copied from `src[start, start+len)`. The drain's hot path. */
  event(typeId: number, threadId: number, seq: number, tsNs: number, src: Uint8Array, start: number, len: number): void {
    const o = this.out;
    // One call for every rare case: a single site in the hot path that optimised code may reach first.
    if (this.blockStart < 0 || o.pos - this.blockStart > this.maxEventBlock || o.pos + 48 + len > o.buf.length) this.makeRoom(tsNs, len);
    const b = o.buf;
    let p = o.pos;
    const flagsAt = p++;
    let flags = 0;
    if (typeId !== this.prevType) {
      flags |= EventFlag.NewType;
      o.pos = p;
      o.varint(typeId);
      p = o.pos;
      this.prevType = typeId;
    }
    if (threadId !== this.prevThread) {
      flags |= EventFlag.NewThread;
      o.pos = p;
      o.varint(threadId);
      o.varint(seq);
      p = o.pos;
      this.prevThread = threadId;
    } else if (seq !== this.prevSeq + 1) {
      flags |= EventFlag.SequenceJump;
      o.pos = p;
      o.varint(seq - this.prevSeq - 1);
      p = o.pos;
    }
    this.prevSeq = seq;
    b[flagsAt] = flags;
    const delta = tsNs - this.prevTs;
    this.prevTs = tsNs;
    // Deltas between neighbouring events are small: one to three bytes without a call.
    if (delta >= 0 && delta < 64) b[p++] = delta * 2;
    else if (delta >= 0 && delta < 8192) {
      const z = delta * 2;
      b[p++] = (z & 127) | 128;
      b[p++] = z >> 7;
    } else if (delta >= 0 && delta < 1048576) {
      const z = delta * 2;
      b[p++] = (z & 127) | 128;
      b[p++] = ((z >> 7) & 127) | 128;
      b[p++] = z >> 14;
    } else {
      o.pos = p;
      o.varint(zigzag(delta));
      p = o.pos;
    }
    if (len < 128) b[p++] = len;
    else {
      o.pos = p;
      o.varint(len);
      p = o.pos;
    }
    if (len > 64) b.set(src.subarray(start, start + len), p);
    else if ((start & 3) === 0 && src.byteOffset === 0) {
      // Payloads in thread buffers are 4-byte aligned: copy words, not bytes (the output is not aligned).
      if (src !== this.src) {
        this.src = src;
        this.src32 = new Int32Array(src.buffer, 0, src.byteLength >> 2);
      }
      const s32 = this.src32;
      const v = o.view;
      let i = 0;
      for (; i + 4 <= len; i += 4) v.setInt32(p + i, s32[(start + i) >> 2]!, true);
      for (; i < len; i++) b[p + i] = src[start + i]!;
    } else {
      for (let i = 0; i < len; i++) b[p + i] = src[start + i]!;
    }
    o.pos = p + len;
  }

  sequencePoint(timeNs: number, maxLatenessNs: number, threads: readonly ThreadProgress[]): void {
    this.closeBlock();
    this.openBlock(BlockKind.SequencePoint);
    const o = this.out;
    o.varint(zigzag(timeNs));
    o.varint(maxLatenessNs);
    o.varint(threads.length);
    for (const t of threads) {
      o.varint(t.threadId);
      o.varint(t.nextSeq);
      o.varint(t.dropped);
    }
    this.closeBlock();
  }

  dropReasons(threads: readonly ThreadDropReasons[]): void {
    this.closeBlock();
    this.openBlock(BlockKind.DropReasons);
    const o = this.out;
    o.varint(threads.length);
    for (const t of threads) {
      o.varint(t.threadId);
      o.varint(t.counts.length);
      for (const n of t.counts) o.varint(n);
    }
    this.closeBlock();
  }

  /** An OTLP export's final counts (OTLP_EXPORT_COUNTS' order). */
  otlpExport(stats: OtlpExportStats): void {
    this.closeBlock();
    this.openBlock(BlockKind.OtlpExport);
    this.out.varint(OTLP_EXPORT_COUNTS.length);
    for (const k of OTLP_EXPORT_COUNTS) this.out.varint(stats[k]);
    this.closeBlock();
  }

  end(t: StreamTotals): void {
    this.closeBlock();
    this.openBlock(BlockKind.EndOfStream);
    const o = this.out;
    const start = o.pos;
    o.f64(t.events);
    o.f64(t.dropped);
    o.f64(t.endTimeNs);
    o.f64(t.maxLatenessNs);
    o.f64(t.threads);
    o.f64(t.eventTypes);
    if (o.pos - start !== END_OF_STREAM_PAYLOAD) throw new Error('end-of-stream payload size drifted from the format');
    this.closeBlock();
  }

  /**
   * Pending bytes, if any (an open events block is closed first). The view is only valid until the
   * next call on this writer: a sink that keeps bytes must copy them.
   */
  take(): Uint8Array | undefined {
    this.closeBlock();
    const o = this.out;
    if (o.pos === 0) return undefined;
    const bytes = o.buf.subarray(0, o.pos);
    o.pos = 0;
    this.bytesTaken += bytes.length;
    return bytes;
  }

  get pendingBytes(): number {
    return this.out.pos;
  }
}
