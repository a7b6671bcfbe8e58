// Spans and counters are typed like events: begin/run by the span's fields, end by its end fields;
// tracepipe/lite offers the same definition shape and the same types.
import { defineProvider, Level } from 'tracepipe';
import { defineProvider as defineLite, Level as LiteLevel } from 'tracepipe/lite';

const definition = {
  keywords: { db: 0x1n },
  events: { Note: { id: 1, fields: [['text', 'string']] } },
  spans: { Query: { id: 10, level: Level.Informational, keywords: ['db'], fields: [['sql', 'string']], endFields: [['rows', 'u32']] }, Bare: { id: 11 } },
  counters: { Inflight: { id: 20, unit: 'requests' } },
} as const;

const db = defineProvider('Types.Spans', definition);
const lite = defineLite('Types.LiteSpans', definition);

export async function usage(): Promise<void> {
  for (const p of [db, lite]) {
    const t: number = p.Query.begin('select 1');
    p.Query.end(t, 3);
    p.Query.fail(t, new Error('x'));
    const rows: number = await p.Query.run(async () => 3, 'select 2');
    const sync: string = p.Query.run(() => 'x', 'select 3');
    p.Bare.end(p.Bare.begin());
    p.Bare.run(() => undefined);
    p.Inflight.set(5);
    p.Inflight.add(-1);
    p.Note.write('hello');
    const on: boolean = p.Query.enabled || p.Inflight.enabled || p.Note.enabled;
    void [rows, sync, on];

    // @ts-expect-error begin takes the span's fields
    p.Query.begin(1);
    // @ts-expect-error end takes the token, then the end fields
    p.Query.end(t, 'three');
    // @ts-expect-error run takes the function first, then the span's fields
    p.Query.run('select 1', () => 3);
    // @ts-expect-error a counter's value is a number
    p.Inflight.add('1');
    // @ts-expect-error no such member
    p.Missing.begin();
  }
  const level: LiteLevel = LiteLevel.Verbose;
  const same: Level = level;
  void same;
  // The full package's span exposes its two event types.
  const names: string[] = [db.Query.beginType.name, db.Query.endType.name, db.Inflight.type.name, db.Inflight.unit];
  void names;
}

// @ts-expect-error 'net' is not one of this provider's keywords
defineLite('Types.LiteBadKw', { keywords: { db: 1n }, spans: { S: { id: 1, keywords: ['net'] } } });
// @ts-expect-error 'u128' is not a field type
defineProvider('Types.BadEndField', { spans: { S: { id: 1, endFields: [['x', 'u128']] } } });
