// `tracepipe convert` as a user meets it: damaged and truncated inputs (every intact event converted,
// then the reader's error and a non-zero exit), empty traces, stdout output, one-line mistakes, the
// missing @tracepipe/analyze package, and the progress line.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceWriter } from '../dist/format/trace-writer.js';
import { assertOneLine, cli, dumpJsonl, needTool, run, withCliAlone } from './helpers/convert-helpers.mjs';
import { parseCsv, parseProtoText } from './helpers/reader-text.mjs';
import { headerInfo, syntheticTrace } from './helpers/synthetic-trace.mjs';

const FORMATS = ['perfetto', 'chrome', 'ctf', 'jsonl', 'csv', 'parquet'];

let dir;
let good;
let damaged;
let truncated;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-convert-cli-'));
  const t = syntheticTrace({ seed: 11, batches: 30, perBatch: 20 });
  good = join(dir, 'good.tptrace');
  await writeFile(good, t.bytes);
  // A flipped byte inside an events block in the middle: its checksum fails, it is skipped, the rest is read.
  const events = t.blocks.filter((b) => b.kind === 'events');
  const victim = events[Math.floor(events.length / 2)];
  const bad = Buffer.from(t.bytes);
  bad[victim.start + 20] ^= 0xff;
  damaged = join(dir, 'damaged.tptrace');
  await writeFile(damaged, bad);
  // Cut inside a later block: everything before it is intact.
  const cut = events[Math.floor((events.length * 3) / 4)];
  truncated = join(dir, 'truncated.tptrace');
  await writeFile(truncated, t.bytes.subarray(0, cut.start + 30));
});
after(() => rm(dir, { recursive: true, force: true }));

/** How many trace events a converted output holds, counted by the format's own reader (drops excluded). */
async function eventsIn(t, format, out) {
  switch (format) {
    case 'jsonl':
      return (await readFile(out, 'utf8')).split('\n').filter((l) => l && !l.includes('"provider":"tracepipe"')).length;
    case 'chrome':
      return JSON.parse(await readFile(out, 'utf8')).traceEvents.filter((e) => e.ph === 'i' && e.cat !== 'tracepipe').length;
    case 'csv': {
      let n = 0;
      for (const f of await readdir(out)) if (f !== 'drops.csv') n += parseCsv(await readFile(join(out, f), 'utf8')).length - 1;
      return n;
    }
    case 'ctf': {
      if (!needTool(t, 'babeltrace2', 'babeltrace2')) return undefined;
      const r = await run('babeltrace2', [out]);
      return r.stdout.split('\n').filter((l) => l !== '').length;
    }
    case 'perfetto': {
      if (!needTool(t, 'protoc', 'protobuf-compiler')) return undefined;
      const schema = fileURLToPath(new URL('./fixtures/perfetto-trace.proto', import.meta.url));
      const r = await run('sh', ['-c', `protoc --decode=perfetto.protos.Trace --proto_path='${dirname(schema)}' '${schema}' < '${out}'`]);
      const packets = parseProtoText(r.stdout).packet;
      const names = new Map(packets.flatMap((p) => p.interned_data?.event_names ?? []).map((n) => [n.iid, n.name]));
      return packets.filter((p) => p.track_event?.type === 'TYPE_INSTANT' && names.get(p.track_event.name_iid) !== 'dropped events').length;
    }
    case 'parquet': {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      let n = 0;
      for (const f of await readdir(out)) {
        if (f !== 'drops.parquet') n += Number((await c.runAndReadAll(`SELECT count(*) AS n FROM '${join(out, f)}'`)).getRowObjects()[0].n);
      }
      c.closeSync();
      db.closeSync();
      return n;
    }
  }
}

for (const [label, input] of [['a damaged', () => damaged], ['a truncated', () => truncated]]) {
  for (const format of FORMATS) {
    test(`${format}: ${label} input converts every intact event, then exits non-zero with the reader's error`, async (t) => {
      const ref = await dumpJsonl(input());
      assert.equal(ref.code, 1, 'dump reports the damage too');
      const readerError = ref.stderr.trim();
      assert.match(readerError, /^tracepipe: (corrupt|truncated) trace/);
      const out = join(dir, `${label.split(' ')[1]}-${format}`);
      const r = await cli(['convert', input(), '--to', format, '-o', out]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.trim(), readerError, 'the same error as the reader gives');
      assert.match(r.stdout, new RegExp(`^converted ${ref.events.length} events `));
      const n = await eventsIn(t, format, out);
      if (n !== undefined) assert.equal(n, ref.events.length);
    });
  }
}

test('an empty trace converts to every format, and the outputs still open', async (t) => {
  const w = new TraceWriter();
  w.header(headerInfo());
  w.end({ events: 0, dropped: 0, endTimeNs: 0, maxLatenessNs: 0, threads: 0, eventTypes: 0 });
  const empty = join(dir, 'empty.tptrace');
  await writeFile(empty, w.take());
  for (const format of FORMATS) {
    const out = join(dir, `empty-${format}`);
    const r = await cli(['convert', empty, '--to', format, '-o', out]);
    assert.equal(r.code, 0, `${format}: ${r.stderr}`);
    assert.match(r.stdout, /^converted 0 events \(none dropped\)/);
    assert.equal(await eventsIn(t, format, out) ?? 0, 0, format);
  }
  assert.deepEqual(JSON.parse(await readFile(join(dir, 'empty-chrome'), 'utf8')).metadata.droppedEvents, 0);
});

test('-o - writes a single-file format to stdout, and the summary to stderr', async () => {
  const r = await cli(['convert', good, '--to', 'jsonl', '-o', '-']);
  assert.equal(r.code, 0, r.stderr);
  const ref = await dumpJsonl(good);
  assert.deepEqual(r.stdout.split('\n').filter((l) => l && !l.includes('"provider":"tracepipe"')).sort(), [...ref.lines].sort());
  assert.match(r.stderr, /^converted \d+ events .* to stdout \(jsonl, /);
});

test('the default output sits beside the input; the summary names it', async () => {
  const r = await cli(['convert', good, '--to', 'perfetto']);
  assert.equal(r.code, 0, r.stderr);
  const out = join(dir, 'good.pftrace');
  assert.ok((await stat(out)).size > 0);
  assert.match(r.stdout, new RegExp(`to ${out} \\(perfetto, `));
});

/** Every user mistake: an exit code, and one `tracepipe: ...` line on stderr. */
test('mistakes get one line and exit 2; unreadable inputs exit 1 and create nothing', async () => {
  const missing = await cli(['convert', good]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'tracepipe: missing --to FORMAT for convert\nusage: tracepipe convert FILE --to FORMAT [options]\n');
  assertOneLine(await cli(['convert', good, '--to', 'svg']), 2, /^tracepipe: --to must be one of perfetto, chrome, ctf, jsonl, csv, speedscope, otlp, parquet, not 'svg'$/);
  assertOneLine(await cli(['convert', good, '--to', 'ctf', '-o', '-']), 2, /writes a directory of files; give -o DIR/);
  assertOneLine(await cli(['convert', good, '--to', 'jsonl', '-o', good]), 2, /would overwrite the input/);
  const full = join(dir, 'full');
  await mkdir(full);
  await writeFile(join(full, 'x'), 'x');
  assertOneLine(await cli(['convert', good, '--to', 'csv', '-o', full]), 2, /full is not empty \(1 entries\); remove it or choose another -o$/);
  assertOneLine(await cli(['convert', good, '--to', 'csv', '-o', join(full, 'x')]), 2, /exists and is not a directory/);
  assertOneLine(await cli(['convert', join(dir, 'nope.tptrace'), '--to', 'chrome', '-o', join(dir, 'nope.json')]), 1, /^tracepipe: no such file: /);
  const notTrace = join(dir, 'not-a-trace.txt');
  await writeFile(notTrace, 'hello, world\n');
  for (const format of [...FORMATS, 'speedscope']) {
    const out = join(dir, `not-${format}`);
    assertOneLine(await cli(['convert', notTrace, '--to', format, '-o', out]), 1, /^tracepipe: not a tracepipe trace \(bad magic number\)$/);
    await assert.rejects(stat(out), { code: 'ENOENT' }, `${format}: nothing written`);
  }
});

test('without @tracepipe/analyze, --to parquet says in one line what to install and exits 2', async () => {
  await withCliAlone(async (main, alone) => {
    const r = await run(process.execPath, [main, 'convert', good, '--to', 'parquet', '-o', join(alone, 'out')]);
    assertOneLine(r, 2, /^tracepipe: tracepipe convert --to parquet needs the @tracepipe\/analyze package: npm install @tracepipe\/analyze$/);
    // Every other format needs nothing more.
    const chrome = await run(process.execPath, [main, 'convert', good, '--to', 'chrome', '-o', join(alone, 'out.json')]);
    assert.equal(chrome.code, 0, chrome.stderr);
  });
});
