// readTrace().skim: every event in stream order with its payload where it lies, fields read there
// (RawPayloads) equal to the decoded ones, and damage reported as summary() reports it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readTrace } from '../dist/index.js';
import { RawPayloads } from '../dist/format/raw-payloads.js';
import { richTrace } from './helpers/convert-helpers.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

test('skim hands over every event as batches() does, and each fixed field read in place equals the decoded one', { timeout: 240_000 }, async (t) => {
  const { file } = await richTrace(await tempDir(t), { perThread: 600 });
  const decoded = [];
  for await (const b of readTrace(file).batches({ order: 'stream' })) decoded.push(...b.events);
  const raw = new RawPayloads();
  const readers = new Map();
  let i = 0;
  let fieldsRead = 0;
  const r = await readTrace(file).skim((e, payload) => {
    const d = decoded[i++];
    assert.deepEqual([e.type.key, e.threadId, e.sequence, e.timestampNs], [d.type.key, d.threadId, d.sequence, d.timestampNs]);
    assert.deepEqual(e.fields, {}, 'fields are not decoded');
    assert.deepEqual(raw.decode(e.type, payload), d.fields);
    assert.deepEqual(raw.decodeCopy(e.type, raw.copy(payload)), d.fields);
    if (!readers.has(e.type)) readers.set(e.type, e.type.layout.fields.map((f) => [f.name, raw.numberField(e.type, f.name)]).filter(([, read]) => read));
    for (const [name, read] of readers.get(e.type)) {
      const v = d.fields[name];
      assert.equal(read(payload), typeof v === 'boolean' ? Number(v) : Number(v), `${e.type.key}.${name}`);
      fieldsRead++;
    }
  });
  const summary = await readTrace(file).summary();
  assert.equal(i, decoded.length);
  assert.deepEqual({ events: r.events, dropped: r.dropped, complete: r.complete }, { events: summary.events, dropped: summary.dropped, complete: true });
  assert.ok(fieldsRead > 10_000, `${fieldsRead} fields read in place, u64 and i64 beyond 2^53 among them`);
  assert.equal(raw.numberField([...readers.keys()][0], 'no such field'), undefined);
});

test('skim hands on one event object per block, rewritten for each event (valid during the call only): no object per event', { timeout: 240_000 }, async (t) => {
  const { file } = await richTrace(await tempDir(t), { perThread: 600 });
  const objects = new Set();
  const seen = [];
  const r = await readTrace(file).skim((e) => {
    objects.add(e);
    seen.push(e.sequence);
  });
  assert.equal(seen.length, r.events, 'every event was handed on, each with its own fields at the time of its call');
  assert.ok(r.events > 1000 && objects.size * 50 < r.events, `${objects.size} event objects for ${r.events} events`);
});

test('skim of a damaged trace: every intact event, then the error summary() reports', { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t);
  const { file } = await richTrace(dir, { perThread: 300 });
  const bytes = await readFile(file);
  const cut = join(dir, 'cut.tptrace');
  await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  let events = 0;
  const r = await readTrace(cut).skim(() => events++);
  const summary = await readTrace(cut).summary();
  assert.equal(r.complete, false);
  assert.deepEqual(r.error, summary.error);
  assert.equal(events, summary.events);
  await assert.rejects(readTrace(join(dir, 'missing.tptrace')).skim(() => {}), /no such file/);
});
