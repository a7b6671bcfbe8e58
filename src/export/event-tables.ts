import type { StreamEventType } from '../format/trace-event.js';
import type { FieldLayout } from '../schema/payload-layout.js';

/** Every event table starts with these columns, then one per field. */
export const TIME_COLUMNS = ['timestamp_ns', 'thread_id', 'sequence'] as const;

/** The table of losses beside the event tables: one row per range of lost sequence numbers. */
export const DROP_TABLE = { name: 'drops', columns: ['timestamp_ns', 'thread_id', 'from_sequence', 'to_sequence', 'count'] } as const;

export interface TableColumn {
  /** The field's name made safe (columnSafe), unique in its table as nameKey compares, never a time column: `_` appended until so. */
  readonly column: string;
  readonly field: FieldLayout;
}

export interface EventTable {
  /** "Provider.Event", safe as a file name and unique case-insensitively (a second layout of one event gets "-2"). */
  readonly name: string;
  /** "Provider/Event". */
  readonly key: string;
  /** In declaration order. */
  readonly columns: readonly TableColumn[];
}

/**
 * What two names become when a SQL engine could take them for one: DuckDB compares identifiers after
 * Unicode NFC normalization, ignoring the case of ASCII letters. Lower-casing every letter is
 * stricter, so names with different keys never clash there.
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** A name as a column or table can carry it: NUL (which ends SQL text) as ␀, and `_` for an empty one (SQL has no empty identifier). */
export function columnSafe(name: string): string {
  return name === '' ? '_' : name.replaceAll('\0', '\u2400');
}

/**
 * One table per event type for tabular formats (CSV, Parquet, SQL). Every thread declares its own
 * copy of a type, so types with the same name and fields share a table; the same name with other
 * fields (a new version) gets its own. A field's column is never one of the time columns nor of
 * `reservedColumns` (a format's own, such as the query's `file`).
 */
export class EventTables {
  private readonly byType = new Map<StreamEventType, EventTable>();
  private readonly bySignature = new Map<string, EventTable>();
  private readonly taken = new Set<string>([DROP_TABLE.name]);

  constructor(private readonly reservedColumns: readonly string[] = []) {}

  /** The table of `t`'s events, and whether this is its first use (the caller creates it then). */
  tableOf(t: StreamEventType): readonly [EventTable, boolean] {
    const known = this.byType.get(t);
    if (known) return [known, false];
    const signature = `${t.key}\n${t.layout.fields.map((f) => `${f.name}:${f.type}`).join('\n')}`;
    const shared = this.bySignature.get(signature);
    if (shared) {
      this.byType.set(t, shared);
      return [shared, false];
    }
    const table: EventTable = { name: this.uniqueName(t.key), key: t.key, columns: columnsOf(t.layout.fields, this.reservedColumns) };
    this.byType.set(t, table);
    this.bySignature.set(signature, table);
    return [table, true];
  }

  private uniqueName(key: string): string {
    const base = key.replace('/', '.').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
    let name = base;
    for (let n = 2; this.taken.has(name.toLowerCase()); n++) name = `${base}-${n}`;
    this.taken.add(name.toLowerCase());
    return name;
  }
}

function columnsOf(fields: readonly FieldLayout[], reserved: readonly string[]): TableColumn[] {
  const taken = new Set<string>([...TIME_COLUMNS, ...reserved].map(nameKey));
  return fields.map((field) => {
    let column = columnSafe(field.name);
    while (taken.has(nameKey(column))) column += '_';
    taken.add(nameKey(column));
    return { column, field };
  });
}
