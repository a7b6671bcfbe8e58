// Issue 12: tracepipe/lite (no imports; disabled with no host; adopted by the host in either load
// order) and two real copies of tracepipe, of different versions, in nested node_modules sharing one host.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LITE_JS = join(ROOT, 'dist/api/lite.js');
let dir;

/** A copy of this package (its package.json with another version, and dist/) installed at `where`. */
function installCopy(where, version) {
  mkdirSync(where, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  writeFileSync(join(where, 'package.json'), JSON.stringify({ ...pkg, version, scripts: {} }));
  cpSync(join(ROOT, 'dist'), join(where, 'dist'), { recursive: true });
}

function writeModule(where, name, source) {
  mkdirSync(where, { recursive: true });
  writeFileSync(join(where, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', exports: './index.mjs' }));
  writeFileSync(join(where, 'index.mjs'), source);
}

// A library on the full tracepipe of its own nested copy, plus tracepipe/lite from that copy.
const LIB = `
import { createRequire } from 'node:module';
import { defineProvider, liveSessions, startSession } from 'tracepipe';
import { defineProvider as defineLite } from 'tracepipe/lite';
export const version = createRequire(import.meta.url)('tracepipe/package.json').version;
export const full = defineProvider('Lib.Full', { spans: { Query: { id: 1, fields: [['sql', 'string']] } }, events: { Hit: { id: 2, fields: [['n', 'u32']] } } });
export const lite = defineLite('Lib.Lite', { spans: { Step: { id: 1, fields: [['n', 'u32']] } }, counters: { Pending: { id: 2, unit: 'jobs' } } });
export const shared = defineProvider('Shared.Cache', { events: { Hit: { id: 1, fields: [['who', 'string']] } } });
export const diff = defineProvider('Shared.Diff', { events: { E: { id: 1, fields: [['x', 'u8']] } } });
export { liveSessions, startSession };
`;

// A library on tracepipe/lite alone.
const LITE_LIB = `
import { defineProvider, Level } from 'tracepipe/lite';
export const p = defineProvider('LiteOnly.Lib', {
  keywords: { io: 1n },
  events: { Ping: { id: 1, level: Level.Informational, keywords: ['io'], fields: [['n', 'u32'], ['big', 'u64']] } },
  spans: { Work: { id: 2, fields: [['what', 'string']], endFields: [['ok', 'bool']] } },
  counters: { Queue: { id: 3, unit: 'items' } },
});
`;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tracepipe-copies-'));
  installCopy(join(dir, 'node_modules/tracepipe'), '9.0.0-app');
  installCopy(join(dir, 'node_modules/lib/node_modules/tracepipe'), '8.0.0-lib');
  writeModule(join(dir, 'node_modules/lib'), 'lib', LIB);
  writeModule(join(dir, 'node_modules/litelib'), 'litelib', LITE_LIB);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `source` as a module in the temp tree; it prints one JSON line. */
function run(name, source, args = []) {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  const r = spawnSync(process.execPath, [file, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${name} failed: ${r.stderr}`);
  return { result: JSON.parse(r.stdout.trim().split('\n').pop()), stderr: r.stderr };
}

// Helpers for the scripts; no static import of tracepipe, so each script decides which copy loads first.
const READ = `
async function read(file) {
  const { readTrace } = await import('tracepipe');
  const events = [];
  for await (const e of readTrace(file)) events.push({ key: e.provider + '/' + e.name, fields: e.fields });
  return events;
}
const json = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? Number(x) : x));
`;

test('the built tracepipe/lite imports nothing, in its code and in its types', () => {
  for (const file of [LITE_JS, LITE_JS.replace(/\.js$/, '.d.ts')]) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /^\s*import\b|^\s*export\s[^;]*\sfrom\s|\bimport\s*\(|\brequire\s*\(/m, `${file} has an import`);
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.exports['./lite'].default, './dist/api/lite.js');
});

test('with no host, every lite object is disabled and works: writes do nothing, begin is 0, run calls fn', () => {
  const { result, stderr } = run(
    'no-host',
    `import { p } from 'litelib';
let ran = 0;
const out = {
  enabled: [p.Ping.enabled, p.Work.enabled, p.Queue.enabled],
  write: p.Ping.write(1, 2n),
  begin: p.Work.begin('x'),
  run: p.Work.run(() => ++ran, 'y'),
  end: p.Work.end(0, true),
  set: p.Queue.set(4), add: p.Queue.add(1),
  host: globalThis[Symbol.for('tracepipe.host')] === undefined,
  waiting: globalThis[Symbol.for('tracepipe.waiting')].map((c) => c.name),
};
out.ran = ran;
console.log(JSON.stringify(out));`,
  );
  assert.deepEqual(result, { enabled: [false, false, false], begin: 0, run: 1, host: true, waiting: ['LiteOnly.Lib'], ran: 1 });
  assert.equal(stderr, '');
});

const LITE_SESSION = (order) => `
${READ}
let tp, lib;
const waiting = () => globalThis[Symbol.for('tracepipe.waiting')]?.length ?? 0;
const pending = [];
if ('${order}' === 'lite-first') { lib = await import('litelib'); lib.p.Queue.add(3); pending.push(waiting()); tp = await import('tracepipe'); }
else { tp = await import('tracepipe'); lib = await import('litelib'); lib.p.Queue.add(3); pending.push(waiting()); }
pending.push(waiting());
const { p } = lib;
const app = tp.defineProvider('App.Host', { spans: { Request: { id: 1, fields: [['route', 'string']] } } });
const file = process.argv[2];
const before = p.Ping.enabled;
const s = await tp.startSession({ providers: 'LiteOnly.Lib,App.Host', output: file });
const during = [p.Ping.enabled, p.Work.enabled, p.Queue.enabled];
await app.Request.run(async () => {
  await p.Work.run(async () => { await new Promise((r) => setTimeout(r, 1)); if (p.Ping.enabled) p.Ping.write(7, 2n ** 40n); }, 'inside');
  const t = p.Work.begin('manual');
  p.Work.end(t, true);
  p.Queue.add(1);
}, '/');
await s.stop();
const events = await read(file);
console.log(json({ pending, before, during, after: p.Ping.enabled, events }));
`;

for (const order of ['lite-first', 'host-first']) {
  test(`lite adopted by the host (${order}): enabled follows sessions, events and spans reach the trace, parents cross the boundary`, () => {
    const file = join(dir, `${order}.tptrace`);
    const { result, stderr } = run(order, LITE_SESSION(order), [file]);
    assert.equal(stderr, '');
    // Lite first: the provider waits on globalThis until the host loads and adopts it.
    assert.deepEqual(result.pending, order === 'lite-first' ? [1, 0] : [0, 0]);
    assert.equal(result.before, false);
    assert.deepEqual(result.during, [true, true, true]);
    assert.equal(result.after, false);
    const ev = (key) => result.events.filter((e) => e.key === key).map((e) => e.fields);
    const [request] = ev('App.Host/Request.Begin');
    const steps = ev('LiteOnly.Lib/Work.Begin');
    assert.deepEqual(steps.map((s) => s.what), ['inside', 'manual']);
    for (const s of steps) assert.equal(s.parentSpanId, request.spanId, 'the host’s span is the lite span’s parent');
    assert.deepEqual(ev('LiteOnly.Lib/Ping'), [{ n: 7, big: 2 ** 40 }]);
    assert.deepEqual(ev('LiteOnly.Lib/Work.End').map((e) => e.ok), [false, true]);
    // The counter started from what the library counted before any host or session: 3, then + 1.
    assert.deepEqual(ev('LiteOnly.Lib/Queue.Counter'), [{ items: 4 }]);
  });
}

test('a component of an incompatible interface version is reported once on stderr and stays disabled; a broken host never crashes lite', () => {
  const { result, stderr } = run(
    'incompatible',
    `await import('tracepipe');
const host = globalThis[Symbol.for('tracepipe.host')];
const member = { enabled: false };
const future = { abi: 99, name: 'Future.Lib', definition: { events: { E: { id: 1 } } }, members: { E: member }, provider: {} };
const accepted = [host.register(future), host.register(future)];
const bad = host.register({ abi: 1, name: 'Bad.Lib', definition: { events: { E: { id: 1, fields: [['x', 'u128']] } } }, members: {}, provider: {} });
console.log(JSON.stringify({ accepted, bad, enabled: member.enabled, version: host.version }));`,
  );
  assert.deepEqual(result, { accepted: [false, false], bad: false, enabled: false, version: 1 });
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 2, stderr);
  assert.match(lines[0], /provider 'Future\.Lib' was built for host interface 99, but tracepipe 9\.0\.0-app hosts this process and speaks 1 to 1; its events stay disabled/);
  assert.match(lines[1], /provider 'Bad\.Lib' cannot be traced: .*bad field/);

  const broken = run(
    'broken-host',
    `globalThis[Symbol.for('tracepipe.host')] = { version: 1, register() { throw new Error('boom'); } };
const { defineProvider } = await import('tracepipe/lite');
const a = defineProvider('A.Lib', { events: { E: { id: 1 } } });
const b = defineProvider('B.Lib', { events: { E: { id: 1 } } });
a.E.write();
console.log(JSON.stringify({ enabled: [a.E.enabled, b.E.enabled] }));`,
  );
  assert.deepEqual(broken.result, { enabled: [false, false] });
  assert.equal(broken.stderr.trim().split('\n').length, 1, 'reported once');
  assert.match(broken.stderr, /tracepipe\/lite: the tracepipe host failed on provider 'A\.Lib' \(boom\)/);

  // An older lite and a newer host: lite hands over what interface 1 defines and lets the host drive.
  const newer = run(
    'newer-host',
    `const seen = [];
globalThis[Symbol.for('tracepipe.host')] = { version: 7, register(c) { seen.push(c.abi); c.members.E.enabled = true; c.members.E.write = (x) => seen.push(x); return true; } };
const { defineProvider } = await import('tracepipe/lite');
const p = defineProvider('Old.Lib', { events: { E: { id: 1, fields: [['x', 'u8']] } } });
if (p.E.enabled) p.E.write(5);
console.log(JSON.stringify(seen));`,
  );
  assert.deepEqual(newer.result, [1, 5]);
  assert.equal(newer.stderr, '');
});

const TWO_COPIES = (order) => `
${READ}
let tp, lib;
if ('${order}' === 'app-first') { tp = await import('tracepipe'); lib = await import('lib'); }
else { lib = await import('lib'); tp = await import('tracepipe'); }
import { createRequire } from 'node:module';
const appVersion = createRequire(import.meta.url)('tracepipe/package.json').version;
const app = tp.defineProvider('App.Main', { spans: { Request: { id: 1, fields: [['route', 'string']] } } });
const shared = tp.defineProvider('Shared.Cache', { events: { Hit: { id: 1, fields: [['who', 'string']] } } });
const diff = tp.defineProvider('Shared.Diff', { events: { E: { id: 1, fields: [['y', 'u16']] } } });
const file = process.argv[2];
// Half the time the library's copy starts the session: there is one set of sessions either way.
const start = '${order}' === 'app-first' ? lib.startSession : tp.startSession;
const s = await start({ providers: 'App.Main,Lib.Full,Lib.Lite,Shared.Cache,Shared.Diff,Runtime.Process', output: file });
const seen = { app: tp.liveSessions().length, lib: lib.liveSessions().length, diff: [diff.E.enabled, lib.diff.E.enabled] };
await app.Request.run(async () => {
  await lib.full.Query.run(async () => {
    await new Promise((r) => setTimeout(r, 1));
    lib.lite.Step.run(() => lib.full.Hit.write(1), 3);
  }, 'select 1');
  shared.Hit.write('app');
  lib.shared.Hit.write('lib');
  if (diff.E.enabled) diff.E.write(1);
  if (lib.diff.E.enabled) lib.diff.E.write(1);
  lib.lite.Pending.add(2);
}, '/');
await s.stop();
const host = globalThis[Symbol.for('tracepipe.host')];
console.log(json({ appVersion, libVersion: lib.version, hostVersion: host.tracepipeVersion, seen, events: await read(file), header: (await tp.readTrace(file).summary()).header.tracepipeVersion }));
`;

for (const order of ['app-first', 'lib-first']) {
  test(`two copies of tracepipe in nested node_modules (${order}): one host, one set of sessions, one trace with both copies' events`, () => {
    const file = join(dir, `${order}.tptrace`);
    const { result, stderr } = run(order, TWO_COPIES(order), [file]);
    assert.equal(result.appVersion, '9.0.0-app');
    assert.equal(result.libVersion, '8.0.0-lib', 'the library really loads its own nested copy');
    const hostVersion = order === 'app-first' ? '9.0.0-app' : '8.0.0-lib';
    assert.equal(result.hostVersion, hostVersion, 'the first copy loaded hosts the thread');
    assert.equal(result.header, hostVersion, 'the trace was written by the host');
    assert.deepEqual(result.seen.app, 1);
    assert.deepEqual(result.seen.lib, 1, 'both copies see the one session');
    const ev = (key) => result.events.filter((e) => e.key === key).map((e) => e.fields);
    const [request] = ev('App.Main/Request.Begin');
    const [query] = ev('Lib.Full/Query.Begin');
    const [step] = ev('Lib.Lite/Step.Begin');
    assert.equal(query.parentSpanId, request.spanId, 'a span of the other copy nests under the application’s');
    assert.equal(step.parentSpanId, query.spanId, 'and a lite span under that');
    assert.deepEqual(ev('Lib.Full/Hit'), [{ n: 1 }]);
    assert.deepEqual(ev('Lib.Lite/Pending.Counter'), [{ jobs: 2 }]);
    // One provider for a definition both copies made: events from both under it.
    assert.deepEqual(ev('Shared.Cache/Hit').map((f) => f.who), ['app', 'lib']);
    // Different definitions under one name: the first defined (the library's) wins, the other stays disabled and is reported.
    assert.deepEqual(result.seen.diff, [false, true]);
    assert.equal(ev('Shared.Diff/E').length, 1);
    assert.match(stderr, /provider 'Shared\.Diff' is defined twice in this thread, differently/);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    // No duplicate providers: the built-in rundown is written once per phase, by the host.
    assert.deepEqual(ev('Runtime.Process/Process').map((f) => [f.phase, f.tracepipeVersion]), [['start', hostVersion], ['stop', hostVersion]]);
  });
}
