/** The field types an event may carry, with their wire codes (stable: they are in the trace format). */
export const FIELD_TYPES = ['bool', 'u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64', 'string', 'bytes'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export type FieldValue<T extends FieldType> = T extends 'bool'
  ? boolean
  : T extends 'u64' | 'i64'
    ? number | bigint
    : T extends 'string'
      ? string
      : T extends 'bytes'
        ? Uint8Array
        : number;

export type FieldSpec = readonly [name: string, type: FieldType];

export function fieldTypeCode(t: FieldType): number {
  return FIELD_TYPES.indexOf(t) + 1;
}

export function fieldTypeFromCode(code: number): FieldType | undefined {
  return FIELD_TYPES[code - 1];
}

export function isFieldType(t: unknown): t is FieldType {
  return typeof t === 'string' && (FIELD_TYPES as readonly string[]).includes(t);
}

/** Bytes a fixed-size field occupies; variable fields occupy a u32 length slot in the fixed part. */
export function fixedSize(t: FieldType): 1 | 2 | 4 | 8 {
  switch (t) {
    case 'bool': case 'u8': case 'i8': return 1;
    case 'u16': case 'i16': return 2;
    case 'u32': case 'i32': case 'f32': case 'string': case 'bytes': return 4;
    case 'u64': case 'i64': case 'f64': return 8;
  }
}

export function isVariable(t: FieldType): t is 'string' | 'bytes' {
  return t === 'string' || t === 'bytes';
}
