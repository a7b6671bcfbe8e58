// Every field type through the whole pipeline: generated writer → shared buffer → drain → file → reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const FIELDS = [
  ['b', 'bool'], ['u8', 'u8'], ['i8', 'i8'], ['u16', 'u16'], ['i16', 'i16'], ['u32', 'u32'], ['i32', 'i32'],
  ['u64', 'u64'], ['i64', 'i64'], ['f32', 'f32'], ['f64', 'f64'], ['s', 'string'], ['raw', 'bytes'],
];
const all = defineProvider('Pipeline.Fields', { events: { All: { id: 1, fields: FIELDS }, Small: { id: 2, fields: [['n', 'u32']] } } });

const values = fc.tuple(
  fc.boolean(),
  fc.integer({ min: 0, max: 0xff }),
  fc.integer({ min: -0x80, max: 0x7f }),
  fc.integer({ min: 0, max: 0xffff }),
  fc.integer({ min: -0x8000, max: 0x7fff }),
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.maxSafeNat()),
  fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.maxSafeInteger()),
  fc.double(),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.uint8Array({ maxLength: 300 }),
);

test('values of every field type round-trip through a real session', async (t) => {
  const file = join(await tempDir(t), 'fields.tptrace');
  const rows = fc.sample(values, { numRuns: 400, seed: 20261122 });
  const s = await startSession({ providers: 'Pipeline.Fields', output: file, bufferSizeMB: 4 });
  for (const row of rows) all.All.write(...row);
  const r = await s.stop();
  assert.deepEqual([r.eventsWritten, r.eventsDropped], [rows.length, 0]);
  let i = 0;
  for await (const e of readTrace(file)) {
    const row = rows[i++];
    const want = {
      b: row[0], u8: row[1], i8: row[2], u16: row[3], i16: row[4], u32: row[5], i32: row[6],
      u64: BigInt(row[7]), i64: BigInt(row[8]), f32: Math.fround(row[9]), f64: row[10], s: row[11], raw: row[12],
    };
    for (const [name] of FIELDS) {
      if (name === 'f32' || name === 'f64') assert.ok(Object.is(e.fields[name], want[name]), `${name}: ${e.fields[name]} vs ${want[name]}`);
      else assert.deepEqual(e.fields[name], want[name], `event ${i - 1}, field ${name}`);
    }
  }
  assert.equal(i, rows.length);
});

test('an event bigger than a buffer chunk is dropped and counted, and later events still arrive', async (t) => {
  const file = join(await tempDir(t), 'big.tptrace');
  const s = await startSession({ providers: 'Pipeline.Fields', output: file, bufferSizeMB: 1 });
  all.Small.write(1);
  all.All.write(true, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'x'.repeat(200_000), new Uint8Array(0));
  all.Small.write(2);
  const r = await s.stop();
  assert.deepEqual([r.eventsWritten, r.eventsDropped], [2, 1]);
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  assert.deepEqual(events.map((e) => [e.name, e.sequence, e.fields.n]), [['Small', 0, 1], ['Small', 2, 2]]);
  const summary = await readTrace(file).summary();
  assert.deepEqual(summary.drops.map((d) => [d.fromSeq, d.toSeq, d.count]), [[1, 1, 1]]);
});
