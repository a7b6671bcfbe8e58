import { computePayloadLayout } from '../schema/payload-layout.js';
import type { EventDescriptor } from '../schema/event-type.js';
import { BLOCK_HEADER_SIZE, BlockKind, checkBlock, END_OF_STREAM_PAYLOAD, MAX_BLOCK_PAYLOAD, readBlockHeader } from './block.js';
import { ByteReader } from './byte-reader.js';
import { SequencePoint } from './sequence-point.js';
import { EventsBlockDecoder, type BlockEvent, type FieldDecoding, type RawPayload } from './events-block.js';
import { TraceFormatError } from './format-error.js';
import { decodeDescriptor } from './metadata-codec.js';
import { OTLP_EXPORT_COUNTS, type OtlpExportStats } from './otlp-export-stats.js';
import { payloadDecoder } from './payload-codec.js';
import { MAX_EVENT_TYPES, MAX_FIELDS_IN_ALL_TYPES } from './reader-limits.js';
import { checkPrefix, decodeHeader, HEADER_PREFIX, headerSize, type TraceHeader } from './stream-header.js';
import type { StreamEventType } from './trace-event.js';
import type { StreamTotals, ThreadDropReasons } from './trace-writer.js';

export interface ParserHandlers {
  header?(h: TraceHeader): void;
  metadata?(t: StreamEventType): void;
  /** `payload`: where its bytes lie, during the call only; so is `e` when fields are not decoded (FieldDecoding false). */
  event?(e: BlockEvent, payload: RawPayload): void;
  sequencePoint?(sp: SequencePoint): void;
  end?(totals: StreamTotals): void;
  dropReasons?(threads: readonly ThreadDropReasons[]): void;
  otlpExport?(stats: OtlpExportStats): void;
  unknownBlock?(kind: number, offset: number): void;
}

/**
 * Bytes in, items out: a push parser for the .tptrace stream that holds at most one block. It never
 * throws anything but TraceFormatError; after one, the stream is unreadable from that offset on.
 * A handler may pause() it (even inside an events block) to hand on what it has so far; resume()
 * goes on from there. The type table is bounded by reader-limits.ts.
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
  private typeDefinitions = 0;
  /** Fields of every type defined so far. */
  private fieldCount = 0;
  /** An events block decoded part way (the parser paused inside it); it ends at `eventsEnd`. */
  private events: EventsBlockDecoder | undefined;
  private eventsEnd = 0;
  private pausing = false;
  /** Size of the incomplete block at `start`, once its header has arrived (else 0). */
  private blockBytes = 0;
  private readonly onEvent = (e: BlockEvent, payload: RawPayload): boolean => {
    this.handlers.event?.(e, payload);
    return this.pausing;
  };

  constructor(
    private readonly handlers: ParserHandlers,
    /** See FieldDecoding: true decodes every payload. */
    private readonly fields: FieldDecoding = true,
  ) {}

  /** Stream offset up to which everything has been parsed. */
  get offset(): number {
    return this.base + this.start;
  }
  get complete(): boolean {
    return this.ended;
  }

  /** True after a handler paused the parser, until resume(). */
  get paused(): boolean {
    return this.pausing;
  }

  /** For handlers: stop after the current event or block; push() only buffers until resume(). */
  pause(): void {
    this.pausing = true;
  }

  resume(): void {
    this.pausing = false;
    this.drain();
  }

  push(chunk: Uint8Array): void {
    const avail = this.end - this.start;
    // A block decoded part way is read in place: never move it.
    if (this.start > 0 && !this.events && avail + chunk.length > this.buf.length - this.start) {
      // Compact: keep only the unparsed tail.
      this.buf.copyWithin(0, this.start, this.end);
      this.base += this.start;
      this.end = avail;
      this.start = 0;
    }
    if (this.end + chunk.length > this.buf.length) {
      // Straight to the size of the block being read (with this chunk), else doubling up to the
      // largest block: one big copy instead of a chain of them, each left for the allocator to reuse.
      const needed = Math.max(this.end, this.start + this.blockBytes) + chunk.length;
      const doubled = Math.min(Math.max(this.buf.length * 2, 64 * 1024), BLOCK_HEADER_SIZE + MAX_BLOCK_PAYLOAD);
      const next = new Uint8Array(Math.max(needed, doubled));
      next.set(this.buf.subarray(0, this.end));
      this.buf = next;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
    this.drain();
  }

  private drain(): void {
    for (;;) {
      if (this.pausing) return;
      if (this.events) {
        if (!this.events.decode(this.onEvent)) return;
        this.events = undefined;
        this.start = this.eventsEnd;
        continue;
      }
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
      if (avail < BLOCK_HEADER_SIZE + h.length) {
        this.blockBytes = BLOCK_HEADER_SIZE + h.length;
        return;
      }
      this.blockBytes = 0;
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
      if (h.kind === BlockKind.Events) {
        // Decoded by the loop above, so that it can pause inside the block.
        this.events = new EventsBlockDecoder(payload, at + BLOCK_HEADER_SIZE, this.types, this.fields);
        this.eventsEnd = this.start + BLOCK_HEADER_SIZE + h.length;
        continue;
      }
      this.block(h.kind, payload, at + BLOCK_HEADER_SIZE);
      this.start += BLOCK_HEADER_SIZE + h.length;
    }
  }

  /** Every definition counts towards the limits, redefinitions too, so whatever keeps one entry per type stays bounded. */
  private defineType(r: ByteReader, typeId: number, d: EventDescriptor): StreamEventType {
    if (++this.typeDefinitions > MAX_EVENT_TYPES) r.overLimit(`more than ${MAX_EVENT_TYPES} event types`);
    this.fieldCount += d.fields.length;
    if (this.fieldCount > MAX_FIELDS_IN_ALL_TYPES) r.overLimit(`more than ${MAX_FIELDS_IN_ALL_TYPES} fields in all event types`);
    const layout = computePayloadLayout(d.fields);
    const t: StreamEventType = { typeId, descriptor: d, layout, decode: payloadDecoder(layout), key: `${d.provider}/${d.name}` };
    this.types.set(typeId, t);
    return t;
  }

  private block(kind: number, payload: Uint8Array, base: number): void {
    switch (kind) {
      case BlockKind.Metadata: {
        const r = new ByteReader(payload, 0, payload.length, base);
        const n = r.varint();
        for (let i = 0; i < n; i++) {
          const typeId = r.varint();
          const t = this.defineType(r, typeId, decodeDescriptor(r));
          this.handlers.metadata?.(t);
        }
        if (!r.done) r.fail('trailing bytes in a metadata block');
        return;
      }
      case BlockKind.SequencePoint: {
        const sp = SequencePoint.read(payload, base);
        this.handlers.sequencePoint?.(sp);
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
      case BlockKind.DropReasons: {
        const r = new ByteReader(payload, 0, payload.length, base);
        const n = r.varint();
        const threads: ThreadDropReasons[] = [];
        for (let i = 0; i < n; i++) {
          const threadId = r.varint();
          const k = r.varint();
          if (k > payload.length) r.fail('implausible reason count in a drop-reasons block');
          const counts: number[] = [];
          for (let j = 0; j < k; j++) counts.push(r.varint());
          threads.push({ threadId, counts });
        }
        if (!r.done) r.fail('trailing bytes in a drop-reasons block');
        this.handlers.dropReasons?.(threads);
        return;
      }
      case BlockKind.OtlpExport: {
        const r = new ByteReader(payload, 0, payload.length, base);
        const k = r.varint();
        if (k > payload.length) r.fail('implausible count in an OTLP-export block');
        const counts: number[] = [];
        for (let j = 0; j < k; j++) counts.push(r.varint());
        if (!r.done) r.fail('trailing bytes in an OTLP-export block');
        // Counts a later version appends are skipped; one this version knows and the block lacks is 0.
        this.handlers.otlpExport?.(Object.fromEntries(OTLP_EXPORT_COUNTS.map((name, j) => [name, counts[j] ?? 0])) as unknown as OtlpExportStats);
        return;
      }
      default:
        this.handlers.unknownBlock?.(kind, base - BLOCK_HEADER_SIZE);
    }
  }

  /** Call at end of input: a stream must end exactly after its end-of-stream block. */
  finish(): void {
    while (this.pausing) this.resume();
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
