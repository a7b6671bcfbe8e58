// Traces with thousands of event types or threads through what keeps something per type or thread:
// the CSV export (a file per type), query (a table per type) and the CTF export (a stream file per
// thread, and per lane of a thread). The CSV writer held an open descriptor and a 64 KiB buffer per
// type: 1,500 types failed with EMFILE, and 8,000 types in a 249 KB trace took 242 MB. Query held a
// DuckDB appender per table and never checkpointed: 8,000 types exhausted DuckDB's memory. The CTF
// writer held a descriptor and a 128 KiB buffer per stream: 2,000 threads failed with EMFILE, and a
// thread whose events went back in time got a stream file per event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, cli, convertMeasured, needTool, run } from './helpers/convert-helpers.mjs';
import { parseBabeltraceLine, parseCsv } from './helpers/reader-text.mjs';
import { tempDir } from './helpers/temp-dir.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';

/** `types` event types, each with `perType` events on two threads, in an order that visits every type over and over. */
async function manyTypes(file, types, perType) {
  const descriptors = Array.from({ length: types }, (_, i) => ({ provider: 'Many.Types', name: `Event${i}`, id: i, version: 0, level: 4, keywords: 0n, fields: [['n', 'u32'], ['label', 'string']] }));
  const events = [];
  const seq = [0, 0];
  for (let round = 0; round < perType; round++) {
    for (let i = 0; i < types; i++) {
      const threadId = (i + round) % 2;
      events.push({ type: descriptors[i], threadId, sequence: seq[threadId]++, timestampNs: 1000 + events.length, values: [round * types + i, `type ${i}, "round" ${round}: ${'x'.repeat(i % 100)}`] });
    }
  }
  await writeTrace(file, descriptors, events);
  return events;
}

test('csv: 2,500 event types convert under a limit of 256 open files, every file with exactly its rows', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'types.tptrace');
  const types = 2_500;
  // 2.5 MB of rows: written out several times over, so files are closed and reopened to append.
  const events = await manyTypes(file, types, 10);
  const out = join(dir, 'out');
  const r = await run('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" "${CLI}" convert "${file}" --to csv -o "${out}"`], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, r.stderr);
  const files = (await readdir(out)).sort();
  assert.equal(files.length, types + 1, 'a file per type and drops.csv');
  for (let i = 0; i < types; i++) {
    const [header, ...rows] = parseCsv(await readFile(join(out, `Many.Types.Event${i}.csv`), 'utf8'));
    assert.deepEqual(header, ['timestamp_ns', 'thread_id', 'sequence', 'n', 'label']);
    const want = events.filter((e) => e.type.name === `Event${i}`).map((e) => [String(e.timestampNs), String(e.threadId), String(e.sequence), String(e.values[0]), e.values[1]]);
    assert.deepEqual(rows, want, `Event${i}`);
  }
  assert.deepEqual(parseCsv(await readFile(join(out, 'drops.csv'), 'utf8')), [['timestamp_ns', 'thread_id', 'from_sequence', 'to_sequence', 'count']]);
});

test('csv: 8,000 event types in a 650 KB trace convert in bounded memory', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'types.tptrace');
  await manyTypes(file, 8_000, 1);
  const r = await convertMeasured([file, '--to', 'csv', '-o', join(dir, 'csv')], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, r.stderr);
  t.diagnostic(`peak RSS ${r.maxRssMB.toFixed(0)} MB`);
  // The same trace as one JSON lines file (nothing per type) peaks at ~110 MB; a 64 KiB buffer per type took 245.
  assert.ok(r.maxRssMB < 160, `peak RSS ${r.maxRssMB.toFixed(0)} MB`);
  assert.equal((await readdir(join(dir, 'csv'))).filter((f) => f.startsWith('Many.Types.')).length, 8_000);
});

test('query: 300 event types visited in turn, past the appenders kept open and the tables between checkpoints, each table with its rows', { timeout: 300_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'types.tptrace');
  const types = 300;
  const events = await manyTypes(file, types, 3);
  const sql = Array.from({ length: types }, (_, i) => `SELECT ${i} AS i, count(*) AS rows, sum(n) AS total, min(label) AS first FROM "Many.Types/Event${i}"`).join(' UNION ALL ');
  const q = await cli(['query', file, `${sql} ORDER BY i`, '--format', 'csv']);
  assert.equal(q.code, 0, q.stderr);
  const [, ...rows] = parseCsv(q.stdout);
  assert.equal(rows.length, types);
  for (const [i, count, total, first] of rows) {
    const mine = events.filter((e) => e.type.name === `Event${i}`);
    assert.deepEqual([Number(count), Number(total), first], [mine.length, mine.reduce((s, e) => s + e.values[0], 0), mine.map((e) => e.values[1]).sort()[0]], `Event${i}`);
  }
});

const TICK = { provider: 'Many.Threads', name: 'Tick', id: 1, version: 0, level: 4, keywords: 0n, fields: [['n', 'u32']] };

test('ctf: 2,000 threads convert under a limit of 256 open files, and babeltrace2 reads every event with its thread and value', { timeout: 300_000 }, async (t) => {
  if (!needTool(t, 'babeltrace2', 'babeltrace2')) return;
  const dir = await tempDir(t);
  const file = join(dir, 'threads.tptrace');
  const events = [];
  for (let round = 0; round < 3; round++) for (let threadId = 0; threadId < 2_000; threadId++) events.push({ type: TICK, threadId, sequence: round, timestampNs: 1000 + events.length, values: [events.length] });
  await writeTrace(file, [TICK], events);
  const out = join(dir, 'ctf');
  const r = await run('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" "${CLI}" convert "${file}" --to ctf -o "${out}"`], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await readdir(out)).length, 2_001, 'a stream per thread and the metadata');
  const bt = await run('babeltrace2', ['--clock-cycles', '--no-delta', out], { timeoutMs: 120_000 });
  assert.equal(bt.code, 0, bt.stderr);
  const got = bt.stdout.split('\n').filter((l) => l !== '').map(parseBabeltraceLine).map((e) => [e.cycles, Number(e.context.thread_id), Number(e.fields.n)]);
  assert.deepEqual(got, events.map((e) => [e.timestampNs, e.threadId, e.values[0]]));
});

test('ctf: a thread whose events keep going back in time gets at most 16 streams, the rest said in a note, and babeltrace2 reads every event', { timeout: 120_000 }, async (t) => {
  if (!needTool(t, 'babeltrace2', 'babeltrace2')) return;
  const dir = await tempDir(t);
  const file = join(dir, 'backwards.tptrace');
  // Each event earlier than the one before it.
  const events = Array.from({ length: 500 }, (_, i) => ({ type: TICK, threadId: 0, sequence: i, timestampNs: 1_000_000 - 1000 * i, values: [i] }));
  await writeTrace(file, [TICK], events);
  const out = join(dir, 'ctf');
  const r = await cli(['convert', file, '--to', 'ctf', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /484 events stamped earlier than each of their thread's 16 streams could take were put at the last time of one/);
  assert.equal((await readdir(out)).filter((f) => f.startsWith('stream-0')).length, 16);
  const bt = await run('babeltrace2', ['--clock-cycles', '--no-delta', out]);
  assert.equal(bt.code, 0, bt.stderr);
  const values = bt.stdout.split('\n').filter((l) => l !== '').map((l) => Number(parseBabeltraceLine(l).fields.n));
  assert.deepEqual(values.sort((a, b) => a - b), events.map((e) => e.values[0]));
});
