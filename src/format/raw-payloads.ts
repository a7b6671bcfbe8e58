import type { RawPayload } from './events-block.js';
import type { DecodedFields } from './payload-codec.js';
import type { StreamEventType } from './trace-event.js';

/** Reads one field of a payload where it lies. */
export type RawFieldReader = (p: RawPayload) => number;

/**
 * Fields read straight from events' payload bytes, for readers that skim (readTrace().skim): a tool
 * that needs two ids of most events and every field of a few pays for what it reads, instead of an
 * object of every field, strings decoded, per event. The payloads' fixed parts are checked by the
 * skim; `decode` checks the rest as the reader does.
 */
export class RawPayloads {
  private bytes: Uint8Array | undefined;
  private view: DataView = new DataView(new ArrayBuffer(0));

  /**
   * A reader of the fixed-size field `name` of `t` as a number (a bool as 0 or 1; a u64 or i64
   * rounded as Number() rounds the bigint, so exact below 2^53, as tracepipe's ids are), or undefined
   * when `t` has no such field or it is a string or bytes.
   */
  numberField(t: StreamEventType, name: string): RawFieldReader | undefined {
    const f = t.layout.fields.find((x) => x.name === name);
    if (!f) return undefined;
    const at = f.offset;
    switch (f.type) {
      case 'bool':
        return (p) => (this.viewOf(p).getUint8(p.start + at) !== 0 ? 1 : 0);
      case 'u8':
        return (p) => this.viewOf(p).getUint8(p.start + at);
      case 'i8':
        return (p) => this.viewOf(p).getInt8(p.start + at);
      case 'u16':
        return (p) => this.viewOf(p).getUint16(p.start + at, true);
      case 'i16':
        return (p) => this.viewOf(p).getInt16(p.start + at, true);
      case 'u32':
        return (p) => this.viewOf(p).getUint32(p.start + at, true);
      case 'i32':
        return (p) => this.viewOf(p).getInt32(p.start + at, true);
      case 'f32':
        return (p) => this.viewOf(p).getFloat32(p.start + at, true);
      case 'f64':
        return (p) => this.viewOf(p).getFloat64(p.start + at, true);
      case 'u64':
        return (p) => {
          const v = this.viewOf(p);
          return v.getUint32(p.start + at, true) + v.getUint32(p.start + at + 4, true) * 2 ** 32;
        };
      case 'i64':
        return (p) => Number(this.viewOf(p).getBigInt64(p.start + at, true));
      default:
        return undefined;
    }
  }

  /** Every field of the event, decoded and checked as the reader decodes them. */
  decode(t: StreamEventType, p: RawPayload): DecodedFields {
    return t.decode(this.viewOf(p), p.bytes, p.start, p.length, p.offset);
  }

  /** A payload's own copy of its bytes, to decode after the skim has moved on (decodeCopy). */
  copy(p: RawPayload): Uint8Array {
    return p.bytes.slice(p.start, p.start + p.length);
  }

  decodeCopy(t: StreamEventType, bytes: Uint8Array): DecodedFields {
    return t.decode(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), bytes, 0, bytes.length, 0);
  }

  /** The events of one block share its bytes: one view per block. */
  private viewOf(p: RawPayload): DataView {
    if (p.bytes !== this.bytes) {
      this.bytes = p.bytes;
      this.view = new DataView(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength);
    }
    return this.view;
  }
}
