import { ByteReader } from './byte-reader.js';
import { checkPayload, type DecodedFields } from './payload-codec.js';
import { MAX_EVENT_PAYLOAD } from './reader-limits.js';
import type { StreamEventType, TraceEvent } from './trace-event.js';
import { EventFlag } from './trace-writer.js';
import { unzigzag } from './varint.js';

const NO_FIELDS: DecodedFields = Object.freeze({}) as DecodedFields;

/** A decoded event that keeps its type, so summaries can count without building field objects. */
export interface BlockEvent extends TraceEvent {
  readonly type: StreamEventType;
}

/**
 * What a decoder does with each payload: true decodes its fields; false checks only its fixed part
 * (tools that count or skim: the event handed on is then one object rewritten for each event, valid
 * during the call only); 'check' checks it whole and leaves decoding to the caller (readers that
 * hold raw bytes and decode later).
 */
export type FieldDecoding = boolean | 'check';

/** Where an event's payload lies; one object per decoder, rewritten for each event: valid during the call only. */
export interface RawPayload {
  bytes: Uint8Array;
  start: number;
  length: number;
  /** Stream offset of bytes[start]. */
  offset: number;
}

type Rewritable<T> = { -readonly [K in keyof T]: T[K] };

/** Receives each event and its payload; returns true to pause the decoder after it. */
export type BlockEventSink = (e: BlockEvent, payload: RawPayload) => boolean;

/**
 * Decodes an events block. Each block starts from scratch (base timestamp; the first event of each
 * run of one thread carries its absolute sequence), so a reader can resume after a bad block.
 * Decoding can pause after any event and go on later: a 16 MiB block of tiny events is millions of
 * objects, so a reader that must hand them on hands them on as it goes instead of all at once.
 */
export class EventsBlockDecoder {
  private readonly r: ByteReader;
  private ts: number;
  private type: StreamEventType | undefined;
  private thread = -1;
  private seq = -1;
  private readonly raw: RawPayload;
  /**
   * Without fields (false), the one event handed on, rewritten for each: those handlers count or
   * skim and keep nothing past the call, and an object per event was most of what a skim of
   * millions of events allocated (explain: half its garbage).
   */
  private readonly scratch: Rewritable<BlockEvent> | undefined;

  constructor(
    payload: Uint8Array,
    base: number,
    private readonly types: ReadonlyMap<number, StreamEventType>,
    private readonly fields: FieldDecoding,
  ) {
    this.r = new ByteReader(payload, 0, payload.length, base);
    this.ts = unzigzag(this.r.varint());
    this.raw = { bytes: payload, start: 0, length: 0, offset: 0 };
    this.scratch = fields === false ? { provider: '', name: '', id: 0, version: 0, level: 0, timestampNs: 0, threadId: 0, sequence: 0, fields: NO_FIELDS, type: undefined! } : undefined;
  }

  /** Decodes until the block ends (returns true) or `onEvent` asks to pause (returns false). */
  decode(onEvent: BlockEventSink): boolean {
    const r = this.r;
    const payload = r.buf;
    const base = r.base;
    const types = this.types;
    const mode = this.fields;
    const raw = this.raw;
    let ts = this.ts;
    let type = this.type;
    let thread = this.thread;
    let seq = this.seq;
    while (!r.done) {
      const at = r.pos;
      const flags = r.u8();
      if (flags & ~7) r.fail(`unknown event flags 0x${flags.toString(16)}`);
      if (flags & EventFlag.NewType) {
        const id = r.varint();
        type = types.get(id);
        if (!type) r.fail(`event of type ${id} before its metadata`);
      } else if (!type) r.fail('first event of a block does not name its type');
      if (flags & EventFlag.NewThread) {
        thread = r.varint();
        seq = r.varint();
      } else {
        if (thread < 0) r.fail('first event of a block does not name its thread');
        seq += 1 + (flags & EventFlag.SequenceJump ? r.varint() : 0);
      }
      ts += unzigzag(r.varint());
      const len = r.varint();
      r.need(len, 'event payload');
      if (len > MAX_EVENT_PAYLOAD) r.overLimit(`a ${len}-byte event payload (at most ${MAX_EVENT_PAYLOAD})`);
      const d = type!.descriptor;
      let fields = NO_FIELDS;
      if (mode === true) fields = type!.decode(r.view, payload, r.pos, len, base + r.pos);
      else if (mode === 'check') checkPayload(type!.layout, payload, r.pos, len, base + r.pos);
      else if (len < type!.layout.fixedSize) r.fail(`payload shorter than its fixed part (event at ${base + at})`);
      raw.start = r.pos;
      raw.length = len;
      raw.offset = base + r.pos;
      r.pos += len;
      let e: BlockEvent;
      const scratch = this.scratch;
      if (scratch) {
        scratch.provider = d.provider;
        scratch.name = d.name;
        scratch.id = d.id;
        scratch.version = d.version;
        scratch.level = d.level;
        scratch.timestampNs = ts;
        scratch.threadId = thread;
        scratch.sequence = seq;
        scratch.type = type!;
        e = scratch;
      } else {
        e = { provider: d.provider, name: d.name, id: d.id, version: d.version, level: d.level, timestampNs: ts, threadId: thread, sequence: seq, fields, type: type! };
      }
      if (onEvent(e, raw) && !r.done) {
        this.ts = ts;
        this.type = type;
        this.thread = thread;
        this.seq = seq;
        return false;
      }
    }
    return true;
  }
}
