import { type FieldSpec, type FieldType, fixedSize, isVariable } from './field-type.js';

/**
 * Where each field of an event lives in its payload. Shared by the writer that copies values into a
 * thread buffer and by every reader, so a payload is the same bytes in memory and in the file.
 *
 * Fixed-size fields (and the u32 length slot of each string/bytes field) are sorted by size, largest
 * first, so every field is naturally aligned with no padding. The bytes of variable fields follow the
 * fixed part in declaration order.
 */
export interface FieldLayout {
  readonly name: string;
  readonly type: FieldType;
  /** Byte offset of the value (or of the length slot, for variable fields) from the payload start. */
  readonly offset: number;
  readonly index: number;
}

export interface PayloadLayout {
  readonly fields: readonly FieldLayout[];
  /** Size of the fixed part; a payload with no variable fields is exactly this long. */
  readonly fixedSize: number;
  /** Variable fields in the order their bytes follow the fixed part. */
  readonly variable: readonly FieldLayout[];
}

export function computePayloadLayout(fields: readonly FieldSpec[]): PayloadLayout {
  const order = fields
    .map(([name, type], index) => ({ name, type, index, size: fixedSize(type) }))
    .sort((a, b) => b.size - a.size || a.index - b.index);
  let offset = 0;
  const placed: FieldLayout[] = [];
  for (const f of order) {
    placed[f.index] = { name: f.name, type: f.type, offset, index: f.index };
    offset += f.size;
  }
  return { fields: placed, fixedSize: offset, variable: placed.filter((f) => isVariable(f.type)) };
}
