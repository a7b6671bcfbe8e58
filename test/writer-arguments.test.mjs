// Issue 9, defect 4: no argument value of any type, for any field type, may write outside the
// thread's chunk or corrupt another record. A refused call is counted as dropped, with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { defineProvider, FIELD_TYPES, readTrace, startSession } from '../dist/index.js';

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-args-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261123);

// One event per field type (plus its neighbour, a control event with known values) and one with all types.
const probes = defineProvider('Test.Args', {
  events: {
    ...Object.fromEntries(FIELD_TYPES.map((t, k) => [`P_${t}`, { id: 10 + k, fields: [['v', t]] }])),
    All: { id: 2, fields: FIELD_TYPES.map((t) => [`f_${t}`, t]) },
    Control: { id: 1, fields: [['n', 'u32'], ['s', 'string'], ['x', 'f64']] },
  },
});

/** Values a JavaScript caller (or `as any`) can pass, including ones that run code when converted. */
function hostileValues(reenter) {
  const liar = new (class extends Uint8Array {
    get length() {
      return 2;
    }
  })(40_000);
  const valueOfReenters = { valueOf: () => (reenter(), 7) };
  const proxy = new Proxy(new Uint8Array(8), { get: (t, k) => (k === 'length' ? (reenter(), 1e9) : Reflect.get(t, k)) });
  return fc.oneof(
    fc.anything({ withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true }),
    fc.constantFrom(NaN, Infinity, -Infinity, -0, undefined, null, 2 ** 64, -(2 ** 63) - 1, Symbol('s'), 10n ** 30n, -1n, '', 'x'.repeat(70_000)),
    fc.constantFrom(valueOfReenters, proxy, liar, new DataView(new ArrayBuffer(8)), new Float64Array(3), [1, 2, 3], { length: -5 }, { length: NaN }, { length: 2 ** 40 }),
  );
}

test('every writer survives arbitrary argument values: the session lives, other events read back exactly, refusals are counted', { timeout: 120_000 }, async () => {
  const file = join(dir, 'args.tptrace');
  const session = await startSession({ providers: 'Test.Args', output: file, bufferSizeMB: 1 });
  let controls = 0;
  const reenter = () => probes.Control.write(controls++, 'reentered', 0.5);
  const writers = [...FIELD_TYPES.map((t) => probes[`P_${t}`]), probes.All];
  fc.assert(
    fc.property(fc.nat(writers.length - 1), fc.array(hostileValues(reenter), { minLength: 0, maxLength: FIELD_TYPES.length + 1 }), fc.boolean(), (w, args, at) => {
      const ev = writers[w];
      try {
        if (at) ev.writeAt(...args);
        else ev.write(...args);
      } catch (e) {
        // Only a value that throws while being inspected by the caller's own code may escape; tracepipe itself never throws here.
        assert.fail(`${ev.name}.${at ? 'writeAt' : 'write'} threw ${e}`);
      }
      probes.Control.write(controls++, `after ${ev.name}`, controls * 0.25);
    }),
    { seed: SEED, numRuns: 3000 },
  );
  const header = session.memory.i32.slice(0, 8);
  const result = await session.stop();
  assert.equal(result.status, 'stopped');
  assert.deepEqual([...session.memory.i32.slice(0, 1)], [0x54504d31], 'the control header is intact');
  assert.equal(header[0], 0x54504d31);
  const main = result.producers.find((p) => p.threadId === threadId);
  assert.ok(main.droppedByReason['invalid-argument'] > 0, 'refused calls are counted with their reason');
  // Every Control event is there, in order, with exactly the values written.
  const seen = [];
  let others = 0;
  for await (const e of readTrace(file)) {
    if (e.name === 'Control') {
      seen.push(e.fields.n);
      assert.ok(e.fields.s === 'reentered' || e.fields.s.startsWith('after '), `control ${e.fields.n} payload intact`);
    } else others++;
  }
  assert.equal(seen.length, controls, 'no Control event lost or corrupted');
  assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true);
  assert.equal(s.events + s.dropped, controls + others + main.dropped, 'read + dropped = attempted');
  assert.equal(s.dropReasons['invalid-argument'], main.droppedByReason['invalid-argument']);
});

// An event type writes with closures first and generated writers from its 256th write on; both keep
// the clock of its first write. Fake timers (sinon's) replace the global \`performance\` for a while:
// a type that crossed into generated writers then must not take the stand-in's clock for good.
test('timestamps stay on the clock of an event type\'s first write across its generated writers, though the application swapped globalThis.performance meanwhile', async () => {
  const p = defineProvider('Test.Clock', { events: { Tick: { id: 1, fields: [['i', 'u32']] } } });
  const file = join(dir, 'clock.tptrace');
  const session = await startSession({ providers: 'Test.Clock', output: file });
  const real = globalThis.performance;
  const t0 = real.now();
  let i = 0;
  try {
    for (; i < 100; i++) p.Tick.write(i);
    globalThis.performance = { now: () => -1e6, timeOrigin: 0 };
    for (; i < 300; i++) p.Tick.write(i);
  } finally {
    globalThis.performance = real;
  }
  for (; i < 400; i++) p.Tick.write(i);
  const t1 = real.now();
  await session.stop();
  const ms = [];
  for await (const e of readTrace(file)) if (e.name === 'Tick') ms[e.fields.i] = Number(e.timestampNs) / 1e6;
  assert.equal(ms.length, 400);
  // The trace's clock is the session's: each event lies between the first write and the last, in order.
  const origin = ms[0] - 0;
  for (let k = 1; k < 400; k++) assert.ok(ms[k] >= ms[k - 1] && ms[k] - origin <= t1 - t0 + 1, `event ${k} at ${ms[k]} ms after ${ms[k - 1]} ms`);
});

test('writeAt(NaN | undefined | Infinity) is refused and does not shift the next event\'s timestamp', async () => {
  const file = join(dir, 'writeat.tptrace');
  const session = await startSession({ providers: 'Test.Args', output: file });
  const t0 = performance.now();
  probes.Control.writeAt(t0, 1, 'a', 0);
  probes.Control.writeAt(NaN, 2, 'b', 0);
  probes.Control.writeAt(undefined, 3, 'c', 0);
  probes.Control.writeAt(Infinity, 4, 'd', 0);
  probes.Control.writeAt(1e300, 6, 'f', 0);
  probes.Control.writeAt(t0 + 1, 5, 'e', 0);
  const result = await session.stop();
  const events = [];
  for await (const e of readTrace(file)) if (e.name === 'Control') events.push(e);
  assert.deepEqual(events.map((e) => e.fields.n), [1, 5]);
  assert.equal(events[1].timestampNs - events[0].timestampNs, 1e6, 'the next event keeps its own time');
  // 1e300 ms passes the writer's cheap check (a finite number) and is refused by the drain, which cannot encode it.
  assert.equal(result.producers.find((p) => p.threadId === threadId).droppedByReason['invalid-argument'], 4);
  const s = await readTrace(file).summary();
  assert.equal(s.dropped, 4);
  assert.equal(s.dropReasons['invalid-argument'], 4);
});

test('a wrong argument type is reported once per event type on stderr, naming the field', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  const warn = defineProvider('Test.Warn', { events: { Blob: { id: 1, fields: [['v', 'bytes']] } } });
  const session = await startSession({ providers: 'Test.Warn', output: join(dir, 'warn.tptrace') });
  warn.Blob.write(42);
  warn.Blob.write('abc');
  await session.stop();
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  const mine = warnings.filter((m) => m.includes('Test.Warn'));
  assert.equal(mine.length, 1);
  assert.match(mine[0], /Test\.Warn\/Blob\.write\(\) got 42 for field 'v' \(bytes\); such events are dropped and counted \(reason invalid-argument\)/);
});

test('a call refused in the middle of a chunk leaves the later events their own sequence numbers, and the loss where it happened', async () => {
  const file = join(dir, 'gap.tptrace');
  const session = await startSession({ providers: 'Test.Args', output: file });
  probes.Control.write(1, 'a', 0);
  probes.Control.write('not a number', 'b', 0);
  probes.Control.write(2, 'c', 0);
  probes.P_u8.write(1n);
  probes.Control.write(3, 'd', 0);
  await session.stop();
  const events = [];
  for await (const e of readTrace(file)) events.push([e.fields.n, e.sequence]);
  assert.deepEqual(events, [[1, 0], [2, 2], [3, 4]]);
  const s = await readTrace(file).summary();
  assert.deepEqual(s.drops.map((d) => [d.fromSeq, d.toSeq]), [[1, 1], [3, 3]]);
});
