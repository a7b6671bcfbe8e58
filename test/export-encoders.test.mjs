// The converters' encoders against independent references: protoc for the protobuf wire format,
// JavaScript's own number printing and JSON.stringify for text, a CSV parser for quoting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { ProtobufWriter } from '../dist/format/protobuf-writer.js';
import { JsonWriter } from '../dist/export/json-text.js';
import { CsvText } from '../dist/export/csv-writer.js';
import { EventTables } from '../dist/export/event-tables.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';
import { needTool, run } from './helpers/convert-helpers.mjs';
import { checkFieldsWriter } from './helpers/fields-writer-check.mjs';
import { parseCsv, parseProtoText } from './helpers/reader-text.mjs';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261123);
const SCHEMA = fileURLToPath(new URL('./fixtures/protobuf-check.proto', import.meta.url));

const sample = fc.letrec((tie) => ({
  sample: fc.record(
    {
      u: fc.maxSafeNat(),
      i: fc.maxSafeInteger(),
      d: fc.double({ noNaN: true }),
      s: fc.string({ unit: 'grapheme', maxLength: 90 }),
      b: fc.boolean(),
      nested: fc.option(tie('sample'), { depthSize: 'small', nil: undefined }),
      exact: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      exactSigned: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    },
    { requiredKeys: ['u', 'i', 'd', 's', 'b', 'exact', 'exactSigned'] },
  ),
})).sample;

function encode(pb, field, m) {
  pb.begin(field);
  pb.uint(1, m.u);
  pb.int(2, m.i);
  pb.double(3, m.d);
  pb.str(4, m.s);
  pb.bool(5, m.b);
  if (m.nested) encode(pb, 6, m.nested);
  pb.bigint(7, m.exact);
  pb.bigint(8, m.exactSigned);
  pb.end();
}

function check(decoded, m) {
  assert.equal(String(decoded.u), String(m.u));
  assert.equal(String(decoded.i), String(m.i));
  // protoc prints a double with 17 significant digits (so exactly), large integral ones without a point.
  assert.ok(Object.is(Number(decoded.d), m.d), `double ${m.d} came back as ${decoded.d}`);
  assert.equal(decoded.s ?? '', m.s);
  assert.equal(decoded.b, m.b);
  assert.equal(String(decoded.exact), String(m.exact));
  assert.equal(String(decoded.exact_signed), String(m.exactSigned));
  if (m.nested) check(decoded.nested, m.nested);
  else assert.equal(decoded.nested, undefined);
}

test('protobuf: protoc decodes what the encoder writes, values exact, nested lengths past 127 bytes included', async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const samples = fc.sample(sample, { numRuns: 300, seed: SEED });
  const pb = new ProtobufWriter(64);
  for (const s of samples) encode(pb, 1, s);
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-pb-'));
  try {
    await writeFile(join(dir, 'samples.bin'), pb.buf.subarray(0, pb.pos));
    const r = await run('sh', ['-c', `protoc --decode=check.Samples --proto_path='${dirname(SCHEMA)}' '${SCHEMA}' < '${join(dir, 'samples.bin')}'`]);
    assert.equal(r.code, 0, r.stderr);
    // protoc prints doubles with 17 significant digits: exact. Repeated `sample` comes back as an array.
    const decoded = parseProtoText(r.stdout.replace(/^(\s*)sample \{/gm, '$1packet {')).packet;
    assert.equal(decoded.length, samples.length);
    samples.forEach((s, i) => check(decoded[i], s));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const text = (w) => Buffer.from(w.buf.subarray(0, w.pos)).toString('utf8');

test('JSON numbers and strings are exactly what JSON.stringify writes', () => {
  const w = new JsonWriter(16);
  fc.assert(
    fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 31), 2 ** 31 - 1)), fc.string({ unit: 'binary' }), (n, s) => {
      w.pos = 0;
      w.number(n);
      w.ascii(',');
      w.text(s);
      assert.equal(text(w), `${JSON.stringify(n)},${JSON.stringify(s)}`);
    }),
    { numRuns: 2000, seed: SEED },
  );
  // The text cache must never hand one double's text to another (same slot, other bits).
  for (let i = 0; i < 50_000; i++) {
    const n = i % 2 ? i * 1e-7 : -i * 3.3;
    w.pos = 0;
    w.number(n);
    assert.equal(text(w), JSON.stringify(n));
  }
});

test('integer fields and microseconds are digit-for-digit what String gives', () => {
  const w = new JsonWriter(16);
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }), fc.constantFrom(0, 9, 10, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1)), fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), (n, ns) => {
      w.pos = 0;
      w.integer(n);
      assert.equal(text(w), String(n));
      w.pos = 0;
      w.microseconds(ns);
      const us = text(w);
      assert.match(us, /^-?\d+\.\d{3}$/);
      assert.equal(BigInt(us.replace('.', '')), BigInt(ns), `${ns} ns written as ${us} µs`);
    }),
    { numRuns: 2000, seed: SEED },
  );
});

test('a type\'s fields writer writes the members JSON.stringify gives, then its closing text, growing its buffer mid-event; so does its form without code generation', async () => {
  assert.equal(checkFieldsWriter(SEED, 1500), 1500);
  // The closure form, in a process that may not compile code from strings.
  const helper = fileURLToPath(new URL('./helpers/fields-writer-check.mjs', import.meta.url));
  const script = `import { checkFieldsWriter } from ${JSON.stringify(helper)}; console.log(checkFieldsWriter(${SEED}, 500));`;
  const r = await run(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '500');
});

test('CSV cells read back exactly: quoted strings with quotes, commas and newlines; -0, NaN and Infinity', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 1, maxLength: 5 }), fc.double(), (strings, n) => {
      const w = new CsvText(8);
      strings.forEach((s) => {
        w.quoted(s);
        w.ascii(',');
      });
      w.number(n);
      w.ascii('\n');
      const [row] = parseCsv(text(w));
      assert.deepEqual(row.slice(0, -1), strings);
      assert.ok(Object.is(Number(row.at(-1)), n), `${n} written as ${row.at(-1)}`);
    }),
    { numRuns: 1000, seed: SEED },
  );
});

function streamType(provider, name, fields) {
  return { key: `${provider}/${name}`, layout: computePayloadLayout(fields), descriptor: { provider, name } };
}

test('event tables: one per name and layout, file-safe names unique case-insensitively, columns never clash', () => {
  const tables = new EventTables();
  const a = streamType('App', 'Tick', [['n', 'u32']]);
  const aOtherThread = streamType('App', 'Tick', [['n', 'u32']]);
  const aV2 = streamType('App', 'Tick', [['n', 'u64']]);
  const upper = streamType('APP', 'TICK', [['x', 'bool']]);
  const odd = streamType('My Lib', 'a/b:c', [['timestamp_ns', 'f64'], ['Timestamp_NS', 'u8'], ['thread_id', 'string']]);
  const drops = streamType('x', 'y', []);
  const [ta, fa] = tables.tableOf(a);
  assert.deepEqual([ta.name, fa], ['App.Tick', true]);
  assert.deepEqual(tables.tableOf(aOtherThread), [ta, false], 'every thread declares its own copy of a type');
  assert.equal(tables.tableOf(aV2)[0].name, 'App.Tick-2');
  assert.equal(tables.tableOf(upper)[0].name, 'APP.TICK-3', 'names differ on case-insensitive filesystems');
  const [to] = tables.tableOf(odd);
  assert.equal(to.name, 'My_Lib.a_b_c');
  assert.deepEqual(to.columns.map((c) => c.column), ['timestamp_ns_', 'Timestamp_NS__', 'thread_id_']);
  assert.equal(tables.tableOf({ ...drops, key: 'drops' })[0].name, 'drops-2', 'never the drops table');
});
