import { computePayloadLayout } from '../schema/payload-layout.js';
import type { EventDescriptor } from '../schema/event-type.js';
import { BLOCK_HEADER_SIZE, BlockKind, checkBlock, END_OF_STREAM_PAYLOAD, readBlockHeader } from './block.js';
import { ByteReader } from './byte-reader.js';
import { decodeEventsBlock, type BlockEvent } from './events-block.js';
import { TraceFormatError } from './format-error.js';
import { decodeDescriptor } from './metadata-codec.js';
import { payloadDecoder } from './payload-codec.js';
import { checkPrefix, decodeHeader, HEADER_PREFIX, headerSize, type TraceHeader } from './stream-header.js';
import type { StreamEventType } from './trace-event.js';
import type { StreamTotals, ThreadProgress } from './trace-writer.js';
import { unzigzag } from './varint.js';

export interface SequencePoint {
  readonly timeNs: number;
  readonly maxLatenessNs: number;
  readonly threads: readonly ThreadProgress[];
}

export interface ParserHandlers {
  header?(h: TraceHeader): void;
  metadata?(t: StreamEventType): void;
  event?(e: BlockEvent): void;
  sequencePoint?(sp: SequencePoint): void;
  end?(totals: StreamTotals): void;
  unknownBlock?(kind: number, offset: number): void;
}

/**
 * Bytes in, items out: a push parser for the .tptrace stream that holds at most one block. It never
 * throws anything but TraceFormatError; after one, the stream is unreadable from that offset on.
 */
export class TraceParser {
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;
  /** Stream offset of buf[0]. */
  private base = 0;
  private header: TraceHeader | undefined;
  private ended = false;
  private damage: TraceFormatError | undefined;
  readonly types = new Map<number, StreamEventType>();

  constructor(
    private readonly handlers: ParserHandlers,
    private readonly withFields = true,
  ) {}

  /** Stream offset up to which everything has been parsed. */
  get offset(): number {
    return this.base + this.start;
  }
  get complete(): boolean {
    return this.ended;
  }

  push(chunk: Uint8Array): void {
    const avail = this.end - this.start;
    if (this.start > 0 && avail + chunk.length > this.buf.length - this.start) {
      // Compact: keep only the unparsed tail.
      this.buf.copyWithin(0, this.start, this.end);
      this.base += this.start;
      this.end = avail;
      this.start = 0;
    }
    if (this.end + chunk.length > this.buf.length) {
      const next = new Uint8Array(Math.max(this.end + chunk.length, this.buf.length * 2, 64 * 1024));
      next.set(this.buf.subarray(0, this.end));
      this.buf = next;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
    this.drain();
  }

  private drain(): void {
    for (;;) {
      const avail = this.end - this.start;
      if (!this.header) {
        if (avail < HEADER_PREFIX) return;
        const size = headerSize(this.buf.subarray(this.start, this.start + HEADER_PREFIX));
        if (avail < size) return;
        this.header = decodeHeader(this.buf.subarray(this.start, this.start + size));
        this.start += size;
        this.handlers.header?.(this.header);
        continue;
      }
      if (avail < BLOCK_HEADER_SIZE) return;
      const at = this.offset;
      if (this.ended) throw new TraceFormatError('corrupt', `corrupt trace: data after the end-of-stream block at byte ${at}`, at);
      const h = readBlockHeader(this.buf, this.start, at);
      if (avail < BLOCK_HEADER_SIZE + h.length) return;
      const block = this.buf.subarray(this.start, this.start + BLOCK_HEADER_SIZE + h.length);
      try {
        checkBlock(h, block, at);
      } catch (e) {
        // A bad checksum with a plausible length: skip the block and read on, so every intact block
        // is delivered; the first damage is reported when the input ends.
        this.damage ??= e as TraceFormatError;
        this.start += BLOCK_HEADER_SIZE + h.length;
        continue;
      }
      const payload = block.subarray(BLOCK_HEADER_SIZE);
      this.block(h.kind, payload, at + BLOCK_HEADER_SIZE);
      this.start += BLOCK_HEADER_SIZE + h.length;
    }
  }

  private block(kind: number, payload: Uint8Array, base: number): void {
    switch (kind) {
      case BlockKind.Metadata: {
        const r = new ByteReader(payload, 0, payload.length, base);
        const n = r.varint();
        for (let i = 0; i < n; i++) {
          const typeId = r.varint();
          const d: EventDescriptor = decodeDescriptor(r);
          const layout = computePayloadLayout(d.fields);
          const t: StreamEventType = { typeId, descriptor: d, layout, decode: payloadDecoder(layout), key: `${d.provider}/${d.name}` };
          this.types.set(typeId, t);
          this.handlers.metadata?.(t);
        }
        if (!r.done) r.fail('trailing bytes in a metadata block');
        return;
      }
      case BlockKind.Events:
        decodeEventsBlock(payload, base, this.types, this.withFields, (e) => this.handlers.event?.(e));
        return;
      case BlockKind.SequencePoint: {
        const r = new ByteReader(payload, 0, payload.length, base);
        const timeNs = unzigzag(r.varint());
        const maxLatenessNs = r.varint();
        const n = r.varint();
        const threads: ThreadProgress[] = [];
        for (let i = 0; i < n; i++) threads.push({ threadId: r.varint(), nextSeq: r.varint(), dropped: r.varint() });
        if (!r.done) r.fail('trailing bytes in a sequence point');
        this.handlers.sequencePoint?.({ timeNs, maxLatenessNs, threads });
        return;
      }
      case BlockKind.EndOfStream: {
        if (payload.length !== END_OF_STREAM_PAYLOAD) {
          throw new TraceFormatError('corrupt', `corrupt trace: end-of-stream block of ${payload.length} bytes at byte ${base}`, base);
        }
        const r = new ByteReader(payload, 0, payload.length, base);
        const totals: StreamTotals = { events: r.f64(), dropped: r.f64(), endTimeNs: r.f64(), maxLatenessNs: r.f64(), threads: r.f64(), eventTypes: r.f64() };
        this.ended = true;
        this.handlers.end?.(totals);
        return;
      }
      default:
        this.handlers.unknownBlock?.(kind, base - BLOCK_HEADER_SIZE);
    }
  }

  /** Call at end of input: a stream must end exactly after its end-of-stream block. */
  finish(): void {
    const at = this.offset;
    if (!this.header) {
      if (this.end - this.start === 0) throw new TraceFormatError('not-a-trace', 'not a tracepipe trace (the file is empty)', 0);
      checkPrefix(this.buf.subarray(this.start, this.end));
      throw new TraceFormatError('truncated', 'truncated trace: the header is incomplete', at);
    }
    if (this.damage) throw this.damage;
    if (this.end > this.start) {
      throw new TraceFormatError('truncated', `truncated trace: the last block is incomplete at byte ${at} (${this.end - this.start} bytes left over)`, at);
    }
    if (!this.ended) throw new TraceFormatError('truncated', `truncated trace: no end-of-stream block (stream stops at byte ${at})`, at);
  }
}
