import type { FieldSpec } from './field-type.js';

/**
 * How spans and counters travel in a trace without a new metadata encoding: as ordinary event types
 * whose name and leading fields say what they are. defineProvider makes them; readers and tools
 * (report, exporters) recognise them here, from a type's descriptor alone (docs/FORMAT.md).
 *
 *   span begin   `<Span>.Begin`     spanId u64, parentSpanId u64, then the span's fields
 *   span end     `<Span>.End`       spanId u64, error bool, errorName string, then the end fields
 *   counter      `<Counter>.Counter` one f64 field, named by the counter's unit
 *
 * Plain events may not use these suffixes, so a type that matches is one of these.
 */
export const SPAN_BEGIN_SUFFIX = '.Begin';
export const SPAN_END_SUFFIX = '.End';
export const COUNTER_SUFFIX = '.Counter';
export const SPAN_BEGIN_FIELDS: readonly FieldSpec[] = [
  ['spanId', 'u64'],
  ['parentSpanId', 'u64'],
];
export const SPAN_END_FIELDS: readonly FieldSpec[] = [
  ['spanId', 'u64'],
  ['error', 'bool'],
  ['errorName', 'string'],
];
export const DEFAULT_COUNTER_UNIT = 'value';

export type TypeRole =
  | { readonly kind: 'span-begin'; readonly span: string }
  | { readonly kind: 'span-end'; readonly span: string }
  | { readonly kind: 'counter'; readonly counter: string; readonly unit: string };

/** True when `name` ends in a suffix reserved for span and counter types. */
export function hasReservedSuffix(name: string): boolean {
  return name.endsWith(SPAN_BEGIN_SUFFIX) || name.endsWith(SPAN_END_SUFFIX) || name.endsWith(COUNTER_SUFFIX);
}

function startsWith(fields: readonly FieldSpec[], prefix: readonly FieldSpec[]): boolean {
  return prefix.every((p, i) => fields[i] !== undefined && fields[i]![0] === p[0] && fields[i]![1] === p[1]);
}

/** What an event type stands for, from its name and fields; undefined for a plain event. */
export function typeRole(d: { readonly name: string; readonly fields: readonly FieldSpec[] }): TypeRole | undefined {
  const { name, fields } = d;
  if (name.endsWith(SPAN_BEGIN_SUFFIX) && startsWith(fields, SPAN_BEGIN_FIELDS)) return { kind: 'span-begin', span: name.slice(0, -SPAN_BEGIN_SUFFIX.length) };
  if (name.endsWith(SPAN_END_SUFFIX) && startsWith(fields, SPAN_END_FIELDS)) return { kind: 'span-end', span: name.slice(0, -SPAN_END_SUFFIX.length) };
  if (name.endsWith(COUNTER_SUFFIX) && fields.length === 1 && fields[0]![1] === 'f64') return { kind: 'counter', counter: name.slice(0, -COUNTER_SUFFIX.length), unit: fields[0]![0] };
  return undefined;
}

/** The field type a decoded value could have come from (u64/i64 read back as bigint; every number as f64). */
function valueType(v: unknown): FieldSpec[1] {
  switch (typeof v) {
    case 'bigint': return 'u64';
    case 'boolean': return 'bool';
    case 'string': return 'string';
    case 'number': return 'f64';
    default: return 'bytes';
  }
}

/**
 * The same for an event as a reader returns it (fields decoded, in declaration order). It allocates:
 * a tool that reads many events keeps the answer per provider and event name.
 */
export function eventRole(e: { readonly name: string; readonly fields: Readonly<Record<string, unknown>> }): TypeRole | undefined {
  if (!hasReservedSuffix(e.name)) return undefined;
  return typeRole({ name: e.name, fields: Object.entries(e.fields).map(([k, v]) => [k, valueType(v)] as const) });
}
