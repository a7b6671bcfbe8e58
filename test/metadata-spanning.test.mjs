// Issue 21, item 10: a thread whose types' descriptions are larger than one chunk keeps every event.
// Types are described on first use, each in records of its own; a description larger than a chunk
// goes in parts across chunks; a ring refuses alone a type it cannot describe beside its event.
// The independent check is the reader: every event written is read back, with its values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProvider, readTrace, startFlightRecorder, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const INDEX = new URL('../dist/index.js', import.meta.url).href;

// 40 event types of 20 fields with long names: about 80 KB of descriptions, more than a 64 KiB chunk.
const field = (e, f) => `e${e}_field_${f}_${'with_a_long_descriptive_name_'.repeat(3)}`;
const WIDE_EVENTS = Object.fromEntries(
  Array.from({ length: 40 }, (_, e) => [`E${e}`, { id: e + 1, fields: Array.from({ length: 20 }, (_, f) => [field(e, f), f % 2 ? 'u32' : 'string']) }]),
);
const wide = defineProvider('Test.WideTypes', { events: WIDE_EVENTS });
const other = defineProvider('Test.Other', { events: { Ping: { id: 1, fields: [['n', 'u32']] } } });
// One type described in about 265 KB: 1,024 fields with 256-byte names (the most defineProvider allows).
const HUGE_FIELDS = Array.from({ length: 1024 }, (_, f) => [`${String(f).padStart(4, '0')}${'x'.repeat(252)}`, 'u8']);
const huge = defineProvider('Test.HugeType', { events: { Huge: { id: 1, fields: HUGE_FIELDS } } });

const wideValues = (e, i) => Array.from({ length: 20 }, (_, f) => (f % 2 ? e * 1000 + i : `${e}:${i}:${f}`));
const hugeValues = (i) => HUGE_FIELDS.map((_, f) => (i + f) & 255);

/** Writes `rounds` rounds of every wide type and a Ping, then `hugeCount` Huge events between Pings. */
function writeAll(rounds, hugeCount) {
  let pings = 0;
  for (let i = 0; i < rounds; i++) {
    other.Ping.write(pings++);
    for (let e = 0; e < 40; e++) wide[`E${e}`].write(...wideValues(e, i));
  }
  for (let i = 0; i < hugeCount; i++) {
    huge.Huge.write(...hugeValues(i));
    other.Ping.write(pings++);
  }
  return pings;
}

/** Checks every event in `file`: the counts asked for, each with the values it was written with. */
async function checkTrace(file, rounds, pings, hugeCount) {
  const seen = { wide: 0, pings: 0, huge: 0 };
  const perType = new Map();
  for await (const e of readTrace(file)) {
    if (e.provider === 'Test.WideTypes') {
      const n = Number(e.name.slice(1));
      const i = perType.get(n) ?? 0;
      perType.set(n, i + 1);
      assert.deepEqual(Object.values(e.fields), wideValues(n, i), `${e.name} #${i}`);
      seen.wide++;
    } else if (e.provider === 'Test.Other') {
      assert.equal(e.fields.n, seen.pings++);
    } else if (e.provider === 'Test.HugeType') {
      assert.deepEqual(Object.values(e.fields), hugeValues(seen.huge++));
    }
  }
  assert.deepEqual(seen, { wide: 40 * rounds, pings, huge: hugeCount });
  const s = await readTrace(file).summary();
  assert.equal(s.dropped, 0);
  assert.equal(s.complete, true);
}

for (const [mode, bufferSizeMB] of [['drop', 4], ['block', 4], ['block', 0.25]]) {
  test(`${mode} mode, ${bufferSizeMB} MB: 40 types x 20 fields (descriptions larger than a chunk) and a type described in 265 KB lose no event of any provider`, async (t) => {
    const file = join(await tempDir(t), 'wide.tptrace');
    const s = await startSession({ providers: 'Test.WideTypes,Test.Other,Test.HugeType', output: file, bufferingMode: mode, bufferSizeMB });
    const pings = writeAll(25, 5);
    const r = await s.stop();
    assert.deepEqual([r.eventsDropped, r.eventsWritten], [0, 40 * 25 + pings + 5]);
    await checkTrace(file, 25, pings, 5);
  });
}

test('a worker thread whose descriptions are larger than a chunk keeps its events too', async (t) => {
  const file = join(await tempDir(t), 'worker.tptrace');
  const src = `
    import { defineProvider } from ${JSON.stringify(INDEX)};
    import { parentPort } from 'node:worker_threads';
    const p = defineProvider('Test.WorkerWide', { events: ${JSON.stringify(WIDE_EVENTS)} });
    parentPort.once('message', () => {
      for (let i = 0; i < 10; i++) for (let e = 0; e < 40; e++) p['E' + e].write(...Array.from({ length: 20 }, (_, f) => (f % 2 ? i : 's' + f)));
      parentPort.postMessage('done');
    });
    parentPort.postMessage('ready');`;
  const { Worker } = await import('node:worker_threads');
  const s = await startSession({ providers: 'Test.WorkerWide', output: file, bufferSizeMB: 4 });
  const w = new Worker(src, { eval: true, type: 'module' });
  await new Promise((resolve) => w.once('message', resolve));
  w.postMessage('go');
  await new Promise((resolve) => w.once('message', resolve));
  await w.terminate();
  const r = await s.stop();
  assert.deepEqual([r.eventsWritten, r.eventsDropped], [400, 0]);
  const s2 = await readTrace(file).summary();
  assert.equal(s2.events, 400);
});

test('a ring keeps every event of 40 types x 20 fields; a type it cannot describe in one chunk is refused alone, once warned, and the others survive the dump', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'ring.tptrace');
  // In a child, to see its warnings: a 1 MB ring has 64 KiB chunks, and Huge's description is 265 KB.
  const src = `
    import { defineProvider, readTrace, startFlightRecorder } from ${JSON.stringify(INDEX)};
    const wide = defineProvider('Test.WideTypes', { events: ${JSON.stringify(WIDE_EVENTS)} });
    const huge = defineProvider('Test.HugeType', { events: { Huge: { id: 1, fields: ${JSON.stringify(HUGE_FIELDS)} } } });
    const rec = await startFlightRecorder({ providers: 'Test.WideTypes,Test.HugeType', sizeMB: 1 });
    for (let i = 0; i < 5; i++) {
      for (let e = 0; e < 40; e++) wide['E' + e].write(...Array.from({ length: 20 }, (_, f) => (f % 2 ? i : 's' + f)));
      huge.Huge.write(...Array.from({ length: 1024 }, () => 1));
    }
    const r = await rec.dump(${JSON.stringify(file)});
    const s = await readTrace(${JSON.stringify(file)}).summary();
    await rec.stop();
    console.log(JSON.stringify({ written: r.eventsWritten, byEvent: s.byEvent, reasons: s.dropReasons }));`;
  const script = join(dir, 'ring.mjs');
  writeFileSync(script, src);
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.written, 200);
  for (let e = 0; e < 40; e++) assert.equal(out.byEvent[`Test.WideTypes/E${e}`], 5, `E${e}`);
  assert.equal(out.byEvent['Test.HugeType/Huge'], undefined);
  assert.equal(out.reasons['too-large'], 5);
  const warnings = r.stderr.split('\n').filter((l) => l.includes('Test.HugeType/Huge is described in'));
  assert.equal(warnings.length, 1, r.stderr);
});

test('a ring dump reads each chunk alone: after it wraps, the surviving chunks still describe every type they hold', async () => {
  const rec = await startFlightRecorder({ providers: 'Test.WideTypes,Test.Other', sizeMB: 1 });
  // About 40 x 1.4 KB of values per round: the 1 MB ring wraps many times.
  const pings = writeAll(300, 0);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-ring-'));
  try {
    const file = join(dir, 'ring.tptrace');
    const r = await rec.dump(file);
    assert.ok(r.eventsWritten > 0);
    let events = 0;
    const byRound = new Map();
    for await (const e of readTrace(file)) {
      events++;
      if (e.provider !== 'Test.WideTypes') continue;
      const n = Number(e.name.slice(1));
      const i = e.fields[field(n, 1)] - n * 1000;
      assert.deepEqual(Object.values(e.fields), wideValues(n, i));
      byRound.set(i, (byRound.get(i) ?? 0) + 1);
    }
    const s = await readTrace(file).summary();
    // What the ring kept plus what it lost is what was written: no event is lost for want of its description.
    assert.equal(events, r.eventsWritten);
    assert.equal(events + s.dropped, 40 * 300 + pings);
    assert.equal(s.dropReasons.overwritten, s.dropped);
    // The newest rounds survive whole.
    assert.equal(byRound.get(299), 40);
  } finally {
    await rec.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a type that would take the stream past a reader\'s limit (65,536 fields in all types) is left out alone: the trace reads to its end, its events counted as too-large', async (t) => {
  const fields = Array.from({ length: 1024 }, (_, f) => [`f${f}`, 'u8']);
  const full = defineProvider('Test.AllFields', { events: Object.fromEntries(Array.from({ length: 64 }, (_, e) => [`E${e}`, { id: e + 1, fields }])) });
  const last = defineProvider('Test.OneMore', { events: { Last: { id: 1, fields: [['n', 'u32']] } } });
  const file = join(await tempDir(t), 'limits.tptrace');
  const s = await startSession({ providers: 'Test.AllFields,Test.OneMore', output: file, bufferingMode: 'block', bufferSizeMB: 8 });
  const values = fields.map((_, f) => f & 255);
  for (let e = 0; e < 64; e++) full[`E${e}`].write(...values);
  last.Last.write(1);
  full.E0.write(...values);
  const r = await s.stop();
  assert.deepEqual([r.eventsWritten, r.eventsDropped], [65, 1]);
  let events = 0;
  for await (const e of readTrace(file)) {
    assert.equal(e.provider, 'Test.AllFields');
    assert.deepEqual(Object.values(e.fields), values);
    events++;
  }
  assert.equal(events, 65);
  const summary = await readTrace(file).summary();
  assert.equal(summary.complete, true);
  assert.equal(summary.dropReasons['too-large'], 1);
  assert.deepEqual(summary.drops.map((d) => [d.fromSeq, d.count]), [[64, 1]]);
});
