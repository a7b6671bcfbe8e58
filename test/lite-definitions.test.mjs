// Issue 21, item 16: tracepipe/lite and tracepipe accept exactly the same provider definitions, and
// refuse the others with the same error; member names that are Object.prototype's (toString,
// constructor) or a provider object's own internals are ordinary names to both.
// This thread loads tracepipe/lite only (no host: its providers wait, disabled); a worker loads
// tracepipe, so each side checks definitions with nothing of the other in its thread.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { defineProvider as defineLite } from '../dist/api/lite.js';
import { tempDir } from './helpers/temp-dir.mjs';

const INDEX = new URL('../dist/index.js', import.meta.url).href;
const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261126);

let worker;
let nextId = 0;
const waiting = new Map();

before(async () => {
  worker = new Worker(
    `import { parentPort } from 'node:worker_threads';
     const { defineProvider } = await import(${JSON.stringify(INDEX)});
     parentPort.on('message', ({ id, name, def }) => {
       try {
         const p = defineProvider(name, def);
         parentPort.postMessage({ id, outcome: { accepted: Object.keys(p).filter((k) => p.events.some((e) => e.name === k) || p.spans.includes(p[k]) || p.counters.includes(p[k])).sort() } });
       } catch (e) {
         parentPort.postMessage({ id, outcome: { error: e?.constructor?.name, message: e?.message } });
       }
     });
     parentPort.postMessage('ready');`,
    { eval: true, type: 'module' },
  );
  worker.on('message', (m) => {
    if (m === 'ready') return waiting.get('ready')?.();
    waiting.get(m.id)(m.outcome);
    waiting.delete(m.id);
  });
  await new Promise((resolve) => waiting.set('ready', resolve));
});
after(() => worker.terminate());

/** tracepipe's verdict on a definition, from the worker. */
function inTracepipe(name, def) {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    worker.postMessage({ id, name, def });
  });
}

/** tracepipe/lite's verdict, here. */
function inLite(name, def) {
  try {
    const p = defineLite(name, def);
    return { accepted: Object.keys(p).filter((k) => k !== 'name').sort() };
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message };
  }
}

// Names from Object.prototype, from a provider object's own members and internals, reserved
// suffixes, the empty name, long ones, and ordinary ones.
const NAMES = [
  'toString', 'constructor', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__proto__', '__defineGetter__', 'toLocaleString',
  'name', 'events', 'spans', 'counters', 'isEnabled', 'enablements', 'keywordMap', 'keywordMask', 'current', 'mirrors', 'signature', 'definition', 'addMirror', 'onFlush',
  'spanId', 'parentSpanId', 'error', 'errorName', 'value',
  'A', 'B', 'Query', 'x.Begin', 'y.End', 'z.Counter', '', 'é', 'n'.repeat(250), 'm'.repeat(257), '\u{1F600}'.repeat(63),
];
const anyName = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...NAMES) }, { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) });
/** A valid value most of the time, something odd once in a while. */
const mostly = (valid) => fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: oddValue });
const TYPES = ['bool', 'u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64', 'string', 'bytes'];
const oddValue = fc.constantFrom(undefined, null, -1, 1.5, 70000, 2 ** 60, 'x', 1n, [], {}, true);
const fieldList = mostly(
  fc.array(fc.oneof({ weight: 20, arbitrary: fc.tuple(anyName, fc.constantFrom(...TYPES)) }, { weight: 1, arbitrary: fc.oneof(oddValue, fc.tuple(anyName, fc.constantFrom('u128', 1))) }), { maxLength: 4 }),
);
const spec = (kind) =>
  mostly(
    fc.record(
      {
        id: mostly(fc.integer({ min: 0, max: 40 })),
        level: mostly(fc.integer({ min: 0, max: 5 })),
        version: mostly(fc.nat(3)),
        keywords: mostly(fc.array(fc.oneof({ weight: 20, arbitrary: fc.constantFrom('io', 'db') }, { weight: 1, arbitrary: anyName }), { maxLength: 2 })),
        ...(kind === 'counters' ? { unit: mostly(anyName) } : { fields: fieldList }),
        ...(kind === 'spans' ? { endFields: fieldList } : {}),
      },
      { requiredKeys: ['id'] },
    ),
  );
const section = (kind) => fc.array(fc.tuple(anyName, spec(kind)), { maxLength: 3 }).map((entries) => Object.fromEntries(entries));
const keywords = fc.array(fc.tuple(anyName, mostly(fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }))), { maxLength: 3 });
const definition = mostly(
  fc.record(
    {
      keywords: mostly(keywords.map((k) => Object.fromEntries([...k, ['io', 1n], ['db', 2n]]))),
      events: section('events'),
      spans: section('spans'),
      counters: section('counters'),
    },
    { requiredKeys: [] },
  ),
);
const providerName = fc.oneof({ weight: 12, arbitrary: fc.constantFrom('Lib', 'My.Lib-x', '_p') }, { weight: 1, arbitrary: fc.constantFrom('9bad', 'has space', '', 'L'.repeat(250), 'toString') }, { weight: 1, arbitrary: oddValue });

test('tracepipe/lite and tracepipe accept and refuse random definitions (prototype keys among the names) identically, with the same error', async () => {
  let run = 0;
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(providerName, definition, async (base, def) => {
      // tracepipe refuses a name defined twice in a thread: each run defines a name of its own.
      const name = typeof base === 'string' ? `${base}${run++}` : base;
      const lite = inLite(name, def);
      const full = await inTracepipe(name, def);
      assert.deepEqual(lite, full, `${String(name)}: ${JSON.stringify(def, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
      if (lite.accepted) accepted++;
    }),
    { seed: SEED, numRuns: 1500 },
  );
  // The runs must have tried both sides of the line.
  assert.ok(accepted >= 150 && accepted <= 1350, `${accepted} definitions of 1,500 accepted`);
});

test('toString, constructor and the other Object.prototype names are event, span and counter names like any other, in both', async () => {
  const def = {
    events: { toString: { id: 1, fields: [['constructor', 'u8']] }, constructor: { id: 2 }, hasOwnProperty: { id: 3 }, valueOf: { id: 4 } },
    spans: { isPrototypeOf: { id: 5, fields: [['toString', 'string']] } },
    counters: { toLocaleString: { id: 6, unit: 'valueOf' } },
  };
  const members = ['constructor', 'hasOwnProperty', 'isPrototypeOf', 'toLocaleString', 'toString', 'valueOf'];
  assert.deepEqual(inLite('Proto.Names', def), { accepted: members });
  assert.deepEqual(await inTracepipe('Proto.Names', def), { accepted: members });
  const proto = { events: Object.fromEntries([['__proto__', { id: 1 }]]) };
  const refusal = { error: 'Error', message: "tracepipe: event name '__proto__' in 'Proto.Own' clashes with a provider member" };
  assert.deepEqual(inLite('Proto.Own', proto), refusal);
  assert.deepEqual(await inTracepipe('Proto.Own', proto), refusal);
});

test('members named after a provider\'s internals (keywordMask, current, mirrors) and Object.prototype\'s leave the provider working: sessions, isEnabled, events read back', async (t) => {
  const file = join(await tempDir(t), 'names.tptrace');
  const src = `
    import { defineProvider, startSession, readTrace } from ${JSON.stringify(INDEX)};
    const file = process.argv[2];
    const p = defineProvider('Internal.Names', {
      keywords: { io: 1n },
      events: { keywordMask: { id: 1, keywords: ['io'], fields: [['n', 'u8']] }, current: { id: 2 }, mirrors: { id: 3 }, toString: { id: 4 }, constructor: { id: 5 } },
    });
    const s = await startSession({ providers: 'Internal.Names', output: file });
    p.keywordMask.write(7); p.current.write(); p.mirrors.write(); p.toString.write(); p.constructor.write();
    const enabled = [p.isEnabled(4, ['io']), p.enablements.length];
    let kw;
    try { p.isEnabled(4, ['toString']); } catch (e) { kw = e.message; }
    await s.stop();
    const names = [];
    for await (const e of readTrace(file)) names.push(e.name);
    console.log(JSON.stringify({ enabled, kw, names, after: p.enablements.length }));`;
  const script = join(dirname(file), 'names.mjs');
  writeFileSync(script, src);
  const r = spawnSync(process.execPath, [script, file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.deepEqual(result, {
    enabled: [true, 1],
    kw: "tracepipe: provider 'Internal.Names' has no keyword 'toString'",
    names: ['keywordMask', 'current', 'mirrors', 'toString', 'constructor'],
    after: 0,
  });
});

test('replacedBy naming no span of the provider is refused by both, with the same error; naming one is accepted by both', async () => {
  const bad = { events: { E: { id: 1, replacedBy: 'Nope' } }, spans: { S: { id: 2 } } };
  const refusal = { error: 'Error', message: "tracepipe: event 'Replaced.Bad/E' is replacedBy 'Nope', which is no span of the provider" };
  assert.deepEqual(inLite('Replaced.Bad', bad), refusal);
  assert.deepEqual(await inTracepipe('Replaced.Bad', bad), refusal);
  const good = { events: { E: { id: 1, replacedBy: 'S' } }, spans: { S: { id: 2 } } };
  assert.deepEqual(inLite('Replaced.Good', good), { accepted: ['E', 'S'] });
  assert.deepEqual(await inTracepipe('Replaced.Good', good), { accepted: ['E', 'S'] });
});
