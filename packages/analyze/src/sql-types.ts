import type { FieldType } from 'tracepipe/export';

/** DuckDB's type for each field type (tables, Parquet columns): 64-bit integers stay exact, never doubles. */
export const SQL_TYPE: Readonly<Record<FieldType, string>> = {
  bool: 'BOOLEAN', u8: 'UTINYINT', i8: 'TINYINT', u16: 'USMALLINT', i16: 'SMALLINT', u32: 'UINTEGER', i32: 'INTEGER',
  u64: 'UBIGINT', i64: 'BIGINT', f32: 'FLOAT', f64: 'DOUBLE', string: 'VARCHAR', bytes: 'BLOB',
};

/** The types of TIME_COLUMNS (timestamp_ns, thread_id, sequence), as every tabular output has them. */
export const TIME_TYPES = ['BIGINT', 'UINTEGER', 'UBIGINT'] as const;
