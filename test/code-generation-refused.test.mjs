// Issue 21, item 3: under `node --disallow-code-generation-from-strings` (new Function throws an
// EvalError), a traced application starts, runs and is traced: writers, span functions, decoders and
// export writers use closures that write and read the same bytes as the generated code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { FIELD_TYPES } from '../dist/index.js';
import { closureWriter } from '../dist/schema/closure-writer.js';
import { generateWriter } from '../dist/schema/event-writer.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';
import { fakeRecordTarget } from './helpers/fake-record-target.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const REFUSE = '--disallow-code-generation-from-strings';
const INDEX = new URL('../dist/index.js', import.meta.url).href;
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261126);

function node(args, options = {}) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000, ...options });
  assert.equal(r.error, undefined, `node ${args.join(' ')} did not end: ${r.error?.message}`);
  return r;
}

// Every field type, a span with end fields, a counter, writeAt, and a refused argument (counted).
const APP = `
import { defineProvider } from ${JSON.stringify(INDEX)};
let refused = false;
try { new Function('return 1'); } catch (e) { refused = e instanceof EvalError; }
const p = defineProvider('App.NoEval', {
  events: { All: { id: 1, fields: ${JSON.stringify(FIELD_TYPES.map((t) => [`f_${t}`, t]))} } },
  spans: { Job: { id: 2, fields: [['what', 'string']], endFields: [['rows', 'u32']] } },
  counters: { Queue: { id: 3, unit: 'items' } },
});
for (let i = 0; i < 500; i++) {
  p.All.write(i % 2 === 0, i & 255, -(i & 127), i, -i, i * 1000, -i * 1000, BigInt(i) << 40n, -i, 0.5, i / 3, 'é' + i, new Uint8Array([i & 255, 7]));
}
p.All.writeAt(performance.now(), true, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 'at', new Uint8Array(0));
p.All.write('not a bool is fine', 'not a number');
await p.Job.run(async () => { p.Queue.add(2); await new Promise((r) => setTimeout(r, 1)); }, 'run');
const t = p.Job.begin('manual');
p.Job.end(t, 42);
p.Job.fail(p.Job.begin('failing'), new RangeError('x'));
console.log(JSON.stringify({ refused, ran: true }));
`;

/** What the trace must hold: 501 All events, 3 span begins and ends, a counter; the refused write counted as dropped. */
const CHECK = `
import { readTrace } from ${JSON.stringify(INDEX)};
const counts = {};
const all = [];
const ends = [];
const trace = readTrace(process.argv[2]);
for await (const e of trace) {
  counts[e.name] = (counts[e.name] ?? 0) + 1;
  if (e.name === 'All' && all.length < 3) all.push(e.fields);
  if (e.name === 'Job.End') ends.push([e.fields.error, e.fields.errorName, e.fields.rows]);
}
const s = await readTrace(process.argv[2]).summary();
console.log(JSON.stringify({ counts, all, ends, dropped: s.dropped, complete: s.complete }, (k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? [...v] : v)));
`;

const EXPECTED_FIRST = {
  f_bool: true, f_u8: 0, f_i8: 0, f_u16: 0, f_i16: 0, f_u32: 0, f_i32: 0, f_u64: '0', f_i64: '0', f_f32: 0.5, f_f64: 0, f_string: 'é0', f_bytes: [0, 7],
};
const EXPECTED_SECOND = {
  f_bool: false, f_u8: 1, f_i8: -1, f_u16: 1, f_i16: -1, f_u32: 1000, f_i32: -1000, f_u64: String(1n << 40n), f_i64: '-1', f_f32: 0.5, f_f64: 1 / 3, f_string: 'é1', f_bytes: [1, 7],
};

test('under --disallow-code-generation-from-strings, TRACEPIPE_ENABLE traces the app: it runs, and the trace holds its events, spans and counter, read back under the flag', async (t) => {
  const dir = await tempDir(t);
  const app = join(dir, 'app.mjs');
  const check = join(dir, 'check.mjs');
  const file = join(dir, 'app.tptrace');
  writeFileSync(app, APP);
  writeFileSync(check, CHECK);
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'App.NoEval', TRACEPIPE_OUTPUT: file };
  const r = node([REFUSE, '--import', REGISTER, app], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { refused: true, ran: true });
  assert.match(r.stderr, /App\.NoEval\/All\.write\(\) got string for field 'f_u8'/);
  const c = node([REFUSE, check, file]);
  assert.equal(c.status, 0, c.stderr);
  const got = JSON.parse(c.stdout);
  assert.deepEqual(got.counts, { All: 501, 'Job.Begin': 3, 'Job.End': 3, 'Queue.Counter': 1 });
  assert.deepEqual(got.all.slice(0, 2), [EXPECTED_FIRST, EXPECTED_SECOND]);
  assert.deepEqual(got.ends, [[false, '', 0], [false, '', 42], [true, 'RangeError', 0]]);
  assert.equal(got.dropped, 1);
  assert.equal(got.complete, true);
});

test('under --disallow-code-generation-from-strings, TRACEPIPE_FLIGHT_RECORDER starts and a dump holds the app\'s events', async (t) => {
  const dir = await tempDir(t);
  const app = join(dir, 'app.mjs');
  const check = join(dir, 'check.mjs');
  const file = join(dir, 'dump.tptrace');
  writeFileSync(app, `${APP}\nconst { liveSessions } = await import(${JSON.stringify(INDEX)});\nawait liveSessions().find((s) => s.bufferingMode === 'ring').dump(${JSON.stringify(file)});\n`);
  writeFileSync(check, CHECK);
  const env = { ...process.env, TRACEPIPE_FLIGHT_RECORDER: '4', TRACEPIPE_FLIGHT_PROVIDERS: 'App.NoEval' };
  const r = node([REFUSE, '--import', REGISTER, app], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.split('\n')[0]), { refused: true, ran: true });
  const c = node([REFUSE, check, file]);
  assert.equal(c.status, 0, c.stderr);
  const got = JSON.parse(c.stdout);
  assert.equal(got.counts.All, 501);
  assert.deepEqual(got.all.slice(0, 2), [EXPECTED_FIRST, EXPECTED_SECOND]);
});

test('the CLI under --disallow-code-generation-from-strings prints and converts exactly what it does without it', async (t) => {
  const dir = await tempDir(t);
  const app = join(dir, 'app.mjs');
  const file = join(dir, 'app.tptrace');
  writeFileSync(app, APP);
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'App.NoEval', TRACEPIPE_OUTPUT: file };
  assert.equal(node(['--import', REGISTER, app], { env }).status, 0);
  const outputs = (flags, tag) => {
    const out = {};
    for (const args of [['dump', file], ['dump', file, '--format', 'jsonl'], ['stats', file, '--json'], ['report', file, '--json']]) {
      const r = node([...flags, CLI, ...args]);
      assert.equal(r.status, 0, r.stderr);
      out[args.join(' ')] = r.stdout;
    }
    for (const to of ['chrome', 'perfetto', 'jsonl', 'csv', 'ctf']) {
      const target = join(dir, `${tag}.${to}`);
      const r = node([...flags, CLI, 'convert', file, '--to', to, '-o', target]);
      assert.equal(r.status, 0, r.stderr);
      if (to === 'csv' || to === 'ctf') for (const f of readdirSync(target)) out[`${to}/${f}`] = readFileSync(join(target, f)).toString('base64');
      else out[to] = readFileSync(target).toString('base64');
    }
    return out;
  };
  const refused = outputs([REFUSE], 'refused');
  const allowed = outputs([], 'allowed');
  assert.deepEqual(Object.keys(refused).sort(), Object.keys(allowed).sort());
  for (const k of Object.keys(allowed)) assert.equal(refused[k], allowed[k], `${k} differs under the flag`);
});

/** A value of each field type, and some any writer refuses. */
const VALUE = {
  bool: fc.oneof(fc.boolean(), fc.constantFrom(0, 1, '', 'x', null)),
  u8: fc.integer({ min: 0, max: 255 }),
  i8: fc.integer({ min: -128, max: 127 }),
  u16: fc.integer({ min: 0, max: 65535 }),
  i16: fc.integer({ min: -32768, max: 32767 }),
  u32: fc.nat(),
  i32: fc.integer(),
  u64: fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.nat()),
  i64: fc.oneof(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), fc.integer()),
  f32: fc.float(),
  f64: fc.double(),
  string: fc.string({ unit: 'binary', maxLength: 40 }),
  bytes: fc.uint8Array({ maxLength: 40 }),
};
const WRONG = fc.constantFrom(undefined, null, 'str', 1n, {}, [], new Float64Array(1), Symbol('s'));

test('the closure writer writes the same record bytes, and refuses the same arguments, as the generated writer', () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...FIELD_TYPES), { maxLength: 14 }).chain((types) =>
        fc.tuple(fc.constant(types), fc.tuple(...types.map((t) => fc.oneof({ weight: 9, arbitrary: VALUE[t] }, { weight: 1, arbitrary: WRONG }))), fc.boolean(), fc.nat(300), fc.boolean()),
      ),
      ([types, values, at, typeIndex, atomic]) => {
        const layout = computePayloadLayout(types.map((t, i) => [`f${i}`, t]));
        const run = (make) => {
          const target = fakeRecordTarget(4096);
          target.reject = () => target.rejects++;
          target.rejects = 0;
          const refusals = [];
          const write = make(layout, typeIndex, { now: () => 1234.5 }, at, (k, v) => refusals.push([k, v]), atomic);
          write.call({ _targets: [target], typeIndex }, ...(at ? [99.25] : []), ...values);
          return { bytes: Buffer.from(target.u8), seq: target.seq, pos: target.pos, rejects: target.rejects, refusals };
        };
        const generated = run(generateWriter);
        const closure = run(closureWriter);
        assert.deepEqual(closure.refusals, generated.refusals);
        assert.deepEqual([closure.seq, closure.pos, closure.rejects], [generated.seq, generated.pos, generated.rejects]);
        assert.ok(closure.bytes.equals(generated.bytes), 'the records differ');
      },
    ),
    { seed: SEED, numRuns: 800 },
  );
});

/** Any UTF-16: ASCII, 2- and 3-byte characters, surrogate pairs and lone surrogates. */
const ANY_UTF16 = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('a', '\u00e9', '\u07ff', '\u0800', '\u20ac', '\uffff', '\ud83d\ude00', '\ud83d', '\ude00'), maxLength: 60 }),
);

/**
 * A target with `room` bytes left in its chunk at `pos` (its type described or not); reserve() records
 * the sizes it is asked for and hands back the current position where the record fits, else -1.
 */
function targetWithRoom(pos, room, described, typeIndex) {
  const t = fakeRecordTarget(4096);
  t.pos = pos;
  t.end = pos + room;
  t.described = new Uint8Array(typeIndex + 1);
  t.described[typeIndex] = described ? 1 : 0;
  t.asked = [];
  t.reserve = function (size, type) {
    this.asked.push(size);
    this.described[type.typeIndex] = 1;
    return this.pos + size <= this.end ? this.pos : -1;
  };
  return t;
}

test('the generated writer checks room as the closure writer does: any UTF-16, any room left, several targets: the same bytes and the same reserve() calls', () => {
  const value = { ...VALUE, string: ANY_UTF16 };
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...FIELD_TYPES, 'string', 'string'), { maxLength: 8 }).chain((types) => fc.tuple(fc.constant(types), fc.tuple(...types.map((t) => value[t])))),
      fc.array(fc.tuple(fc.nat(300), fc.nat(600), fc.boolean()), { minLength: 1, maxLength: 3 }),
      ([types, values], rooms) => {
        const layout = computePayloadLayout(types.map((t, i) => [`f${i}`, t]));
        const run = (make) => {
          const targets = rooms.map(([slot, room, described]) => targetWithRoom(16 + slot * 8, room, described, 3));
          const write = make(layout, 3, { now: () => 1.5 }, false, () => undefined, false);
          write.call({ _targets: targets, typeIndex: 3 }, ...values);
          return targets;
        };
        const generated = run(generateWriter);
        const closure = run(closureWriter);
        for (const [k, g] of generated.entries()) {
          const c = closure[k];
          assert.deepEqual([g.pos, g.seq, g.asked], [c.pos, c.seq, c.asked], `target ${k}`);
          assert.ok(Buffer.from(g.u8).equals(Buffer.from(c.u8)), `target ${k}: the records differ`);
          if (g.seq > 0) assert.ok(g.u32[g.commitIndex] <= g.end + 7, `target ${k}: a record ran past the room it had`);
        }
      },
    ),
    { seed: SEED, numRuns: 1500 },
  );
});
