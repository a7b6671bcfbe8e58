import { ByteReader } from './byte-reader.js';
import type { DecodedFields } from './payload-codec.js';
import type { StreamEventType, TraceEvent } from './trace-event.js';
import { EventFlag } from './trace-writer.js';
import { unzigzag } from './varint.js';

const NO_FIELDS: DecodedFields = Object.freeze({}) as DecodedFields;

/** A decoded event that keeps its type, so summaries can count without building field objects. */
export interface BlockEvent extends TraceEvent {
  readonly type: StreamEventType;
}

/**
 * Decodes an events block. Each block starts from scratch (base timestamp; the first event of each
 * run of one thread carries its absolute sequence), so a reader can resume after a bad block.
 */
export function decodeEventsBlock(
  payload: Uint8Array,
  base: number,
  types: ReadonlyMap<number, StreamEventType>,
  withFields: boolean,
  onEvent: (e: BlockEvent) => void,
): void {
  const r = new ByteReader(payload, 0, payload.length, base);
  let ts = unzigzag(r.varint());
  let type: StreamEventType | undefined;
  let thread = -1;
  let seq = -1;
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
    const d = type!.descriptor;
    const fields = withFields ? type!.decode(r.view, payload, r.pos, len, base + r.pos) : NO_FIELDS;
    if (!withFields && len < type!.layout.fixedSize) r.fail(`payload shorter than its fixed part (event at ${base + at})`);
    r.pos += len;
    onEvent({
      provider: d.provider,
      name: d.name,
      id: d.id,
      version: d.version,
      level: d.level,
      timestampNs: ts,
      threadId: thread,
      sequence: seq,
      fields,
      type: type!,
    });
  }
}
