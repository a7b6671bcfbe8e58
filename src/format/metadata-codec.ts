import { fieldTypeCode, fieldTypeFromCode, type FieldSpec } from '../schema/field-type.js';
import type { EventDescriptor } from '../schema/event-type.js';
import { MAX_FIELDS_PER_EVENT, MAX_NAME_BYTES } from '../schema/definition-limits.js';
import { isLevel } from '../schema/level.js';
import type { ByteReader } from './byte-reader.js';
import type { ByteWriter } from './byte-writer.js';

/** An event type's self-description, used in thread buffers and in the stream's metadata blocks. */
export function encodeDescriptor(d: EventDescriptor, out: ByteWriter): void {
  out.string(d.provider);
  out.string(d.name);
  out.varint(d.id);
  out.varint(d.version);
  out.u8(d.level);
  out.u64(d.keywords);
  out.varint(d.fields.length);
  for (const [name, type] of d.fields) {
    out.string(name);
    out.u8(fieldTypeCode(type));
  }
}

export function decodeDescriptor(r: ByteReader): EventDescriptor {
  const provider = r.string(MAX_NAME_BYTES);
  const name = r.string(MAX_NAME_BYTES);
  const id = r.varint();
  const version = r.varint();
  const level = r.u8();
  if (!isLevel(level)) r.fail(`unknown level ${level}`);
  const keywords = r.u64();
  const n = r.varint();
  if (n > MAX_FIELDS_PER_EVENT) r.overLimit(`an event type with ${n} fields (at most ${MAX_FIELDS_PER_EVENT})`);
  const fields: FieldSpec[] = [];
  for (let i = 0; i < n; i++) {
    const fname = r.string(MAX_NAME_BYTES);
    const code = r.u8();
    const type = fieldTypeFromCode(code);
    if (!type) r.fail(`unknown field type code ${code}`);
    fields.push([fname, type]);
  }
  return { provider, name, id, version, level, keywords, fields };
}
