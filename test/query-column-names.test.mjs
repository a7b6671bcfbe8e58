// Column and table names in `tracepipe query` and `convert --to parquet`, for any names a provider may
// declare: fields named `file` and `file_` in a query over several files, names with NUL (which ends
// SQL text), empty names, quotes, SQL keywords, the time columns' names, and names DuckDB takes for
// one another (ASCII case, and Unicode NFC: "é" precomposed or as e + U+0301). Checked with DuckDB
// itself: every table loads, every field has a column of its own holding its value, the column is the
// field's name (NUL as ␀, empty as _) with underscores appended, and selecting it by name in SQL works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { convertTrace } from '../dist/export.js';
import { writeTrace } from './helpers/trace-builder.mjs';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261126);
const { createParquetWriter, finishParquet, openTraceDatabase, openDuckDB } = await import('@tracepipe/analyze');

const ident = (name) => `"${name.replaceAll('"', '""')}"`;
const literal = (s) => `'${s.replaceAll("'", "''")}'`;
/** The column a field's name should give: NUL as ␀, empty as _, then any number of underscores. */
const columnFor = (name) => new RegExp(`^${(name === '' ? '_' : name.replaceAll('\0', '\u2400')).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}_*$`, 'u');

/** Characters that make names collide or break SQL, among ordinary ones. */
const tricky = fc.constantFrom('a', 'A', 'e', 'E', 'é', 'e\u0301', 'É', 'K', 'k', '\u212A', 'ß', 'S', '_', ' ', '\0', '"', "'", ',', '\n', '.', '/', '-', '\u00e9\u0301', '\uFFFD', '😀', 'Σ', 'σ');
const fieldName = fc.oneof(
  fc.constantFrom('file', 'file_', 'FILE', '', '\0', 'a\0b', 'timestamp_ns', 'Timestamp_NS', 'thread_id', 'sequence', 'select', 'from', 'where', 'group', '"', "'", 'é', 'e\u0301', 'É', 'E\u0301'),
  fc.string({ unit: tricky, maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
/** What the schema accepts: distinct names, not __proto__, at most 256 bytes of UTF-8 (lone surrogates travel as U+FFFD, so they are left out). */
const legal = (n) => n !== '__proto__' && Buffer.byteLength(n) <= 256 && n.isWellFormed();
const eventName = fc.oneof(fc.constantFrom('Ev', 'EV', 'ev', 'e\u0301v', '\u00e9v', 'a\0b', 'events', 'drops', 'threads', 'header'), fc.string({ unit: tricky, minLength: 1, maxLength: 5 }));
const reservedSuffix = (n) => n.endsWith('.Begin') || n.endsWith('.End') || n.endsWith('.Counter');
const RESERVED_MEMBERS = new Set(['name', 'keywordMap', 'events', 'spans', 'counters', 'isEnabled', 'enablements', 'definition', 'signature', 'onEnable', 'onDisable', 'onFlush', 'addMirror']);
const types = fc.uniqueArray(
  fc.record({ name: eventName.filter((n) => legal(n) && !reservedSuffix(n) && !RESERVED_MEMBERS.has(n)), fields: fc.uniqueArray(fieldName.filter(legal), { minLength: 1, maxLength: 10 }) }),
  { minLength: 1, maxLength: 3, selector: (t) => t.name },
);

/** A trace with one event per type, field j of type i holding 1000 i + j + 1. */
async function traceOf(file, spec) {
  const descriptors = spec.map((t, i) => ({ provider: 'Names.Test', name: t.name, id: i + 1, version: 0, level: 4, keywords: 0n, fields: t.fields.map((f) => [f, 'u32']) }));
  await writeTrace(file, descriptors, descriptors.map((d, i) => ({ type: d, threadId: 0, sequence: i, timestampNs: 1000 + i, values: d.fields.map((_, j) => 1000 * i + j + 1) })));
}

/**
 * Rows of each table read back (its column names and first row), identified by the values it holds:
 * every field must be a column of its own, named after the field, with its value.
 */
function assertTables(spec, tables, leading) {
  assert.equal(tables.length, spec.length, 'a table per type');
  for (const { columns, row } of tables) {
    const i = Math.floor((Number(row[leading.length + 3]) - 1) / 1000);
    const t = spec[i];
    assert.ok(t, `a table holds type ${i}`);
    assert.deepEqual(columns.slice(0, leading.length + 3), [...leading, 'timestamp_ns', 'thread_id', 'sequence']);
    const fields = columns.slice(leading.length + 3);
    assert.equal(fields.length, t.fields.length, `${JSON.stringify(t.name)}: a column per field`);
    t.fields.forEach((f, j) => {
      assert.match(fields[j], columnFor(f), `${JSON.stringify(t.name)}: field ${JSON.stringify(f)} as column ${JSON.stringify(fields[j])}`);
      assert.equal(Number(row[leading.length + 3 + j]), 1000 * i + j + 1, `${JSON.stringify(t.name)}: field ${JSON.stringify(f)} holds its value`);
    });
  }
}

/** Each event table of a query database: its columns, and its first row through SQL naming each column. */
async function queryTables(files) {
  const db = await openTraceDatabase(files);
  try {
    const out = [];
    for (const t of (await db.schema()).filter((s) => s.kind === 'table' && !['drops', 'threads', 'header'].includes(s.name))) {
      const columns = t.columns.map((c) => c.name);
      const rows = [];
      for await (const result of db.query(`SELECT ${columns.map(ident).join(', ')} FROM ${ident(t.name)}`)) for await (const chunk of result.chunks) rows.push(...chunk);
      assert.equal(rows.length, files.length, `${t.name}: one row per file`);
      out.push({ columns, row: rows[0] });
    }
    return out;
  } finally {
    await db.close();
  }
}

test('property: any legal field and event names load into query tables (one file and several) and Parquet files, every field its own column', { timeout: 900_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-names-'));
  const engine = await openDuckDB({ spillDir: join(dir, 'check-engine') });
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(types, async (spec) => {
        const runDir = join(dir, String(run++));
        const file = join(runDir, 'a.tptrace');
        const other = join(runDir, 'b.tptrace');
        await mkdir(runDir);
        await traceOf(file, spec);
        await copyFile(file, other);

        assertTables(spec, await queryTables([file]), []);
        assertTables(spec, await queryTables([file, other]), ['file']);

        const out = join(runDir, 'parquet');
        const staged = await convertTrace(file, createParquetWriter(out));
        await finishParquet(staged.output);
        const tables = [];
        for (const f of (await readdir(out)).filter((x) => x !== 'drops.parquet')) {
          const r = await engine.connection.runAndReadAll(`SELECT * FROM read_parquet(${literal(join(out, f))})`);
          tables.push({ columns: r.columnNames(), row: r.getRows()[0] });
        }
        assertTables(spec, tables, []);
        await rm(runDir, { recursive: true, force: true });
      }),
      {
        numRuns: 40,
        seed: SEED,
        examples: [
          [[{ name: 'Ev', fields: ['file', 'file_'] }]],
          [[{ name: 'Ev', fields: ['a\0b', 'a\u2400b', ''] }]],
          [[{ name: 'Ev', fields: ['é', 'e\u0301', 'É', 'E\u0301'] }, { name: 'e\u0301v', fields: ['x'] }, { name: '\u00e9v', fields: ['x'] }]],
          [[{ name: 'a\0b', fields: ['Timestamp_NS', 'timestamp_ns_', 'FILE', 'select', '"', "'"] }, { name: 'EV', fields: ['k', 'K', '\u212A'] }]],
        ],
      },
    );
  } finally {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
});
