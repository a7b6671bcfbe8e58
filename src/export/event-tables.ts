import type { StreamEventType } from '../format/trace-event.js';
import type { FieldLayout } from '../schema/payload-layout.js';

/** Every event table starts with these columns, then one per field. */
export const TIME_COLUMNS = ['timestamp_ns', 'thread_id', 'sequence'] as const;

/** The table of losses beside the event tables: one row per range of lost sequence numbers. */
export const DROP_TABLE = { name: 'drops', columns: ['timestamp_ns', 'thread_id', 'from_sequence', 'to_sequence', 'count'] } as const;

export interface TableColumn {
  /** Unique in its table (case-insensitively), never one of the time columns. */
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
 * One table per event type for tabular formats (CSV, Parquet). Every thread declares its own copy of
 * a type, so types with the same name and fields share a table; the same name with other fields (a
 * new version) gets its own.
 */
export class EventTables {
  private readonly byType = new Map<StreamEventType, EventTable>();
  private readonly bySignature = new Map<string, EventTable>();
  private readonly taken = new Set<string>([DROP_TABLE.name]);

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
    const table: EventTable = { name: this.uniqueName(t.key), key: t.key, columns: columnsOf(t.layout.fields) };
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

function columnsOf(fields: readonly FieldLayout[]): TableColumn[] {
  const taken = new Set<string>(TIME_COLUMNS);
  return fields.map((field) => {
    let column = field.name;
    while (taken.has(column.toLowerCase())) column += '_';
    taken.add(column.toLowerCase());
    return { column, field };
  });
}
