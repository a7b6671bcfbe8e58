// What `import 'tracepipe'` and `--import tracepipe/register` load: the public entry defines the
// providers and the API's front ends; sessions, buffers, the drain, sinks, the built-in providers'
// machinery, IPC, the reader and exporters load on first use, through src/machinery.ts (README.md,
// "Layout"). Each list here is that layout's eager part; a module added to it is a decision, made here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOG = fileURLToPath(new URL('./fixtures/module-log.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The package's modules (paths under dist/) a fresh process loads running `code` (an ES module). */
async function loadedBy(code, { nodeArgs = [], env = {} } = {}) {
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', LOG, ...nodeArgs, '--input-type=module', '-e', code], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([k]) => !k.startsWith('TRACEPIPE_') || k in env)),
    timeout: 60_000,
  });
  return stderr.split('\n').filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length)).sort();
}

/** Everything import 'tracepipe' may load: the schema, the built-in providers' definitions, the API's front ends, and small leaves. */
const EAGER = [
  /^index\.js$/,
  /^machinery\.js$/,
  // What register does when asked (register's own bundle, which the import reads): functions only.
  /^register-start\.js$/,
  // Runs the bundles that are scripts (the public API's is one), with the addon that checks their caches.
  /^bundle-script\.js$/,
  /^schema\/[\w-]+\.js$/,
  /^providers\/definitions\/[\w-]+\.js$/,
  /^providers\/runtime-providers\.js$/,
  /^providers\/counters\/runtime-counter-catalog\.js$/,
  /^providers\/gc-pause-(source|tally)\.js$/,
  /^api\/(tracepipe-host|on-first-use|worker-join|gc-pause-monitor)\.js$/,
  /^buffers\/clock\.js$/,
  /^format\/(drop-reason|format-error|read-options)\.js$/,
  /^session\/(channel-data|control-names|native-addon|provider-spec|published-sessions|session-error|trace-profiles|version)\.js$/,
  /^ipc\/target-error\.js$/,
];

/**
 * `files`, with the modules each bundle among them holds (scripts/bundle-main-thread.mjs): a bundle
 * under bundles/ stands for its members only; one written at its root's path (the session machinery,
 * a provider's machinery) is that module as well.
 */
async function withMembers(files) {
  const out = files.filter((f) => !f.startsWith('bundles/'));
  for (const f of files) out.push(...(await membersOf(f)));
  return [...new Set(out)].sort();
}

/** The modules of dist/ that are part of `bundle`: each is a file that re-exports its part. */
async function membersOf(bundle) {
  const files = (await readdir(join(ROOT, 'dist'), { recursive: true })).filter((f) => f.endsWith('.js'));
  const mark = `// tracepipe: this module is part of ${bundle}\n`;
  const members = [];
  for (const f of files) if ((await readFile(join(ROOT, 'dist', f), 'utf8')).startsWith(mark)) members.push(f);
  return members.sort();
}

// The import reads its modules as bundles, and the one that tracepipe/register loads without it.
// Node's loader costs ~1 ms a file.
test("import 'tracepipe' reads 5 files: its entry, three bundles and register's own", { timeout: 90_000 }, async () => {
  const loaded = await loadedBy("await import('tracepipe')");
  assert.deepEqual(loaded, ['bundles/public-api.js', 'bundles/register-own.js', 'bundles/register-shared.js', 'bundles/shared.js', 'index.js']);
});

test("import 'tracepipe' loads the providers' definitions and the API, not sessions, the drain, IPC, the reader or exporters", { timeout: 90_000 }, async () => {
  const files = await loadedBy("await import('tracepipe')");
  const loaded = await withMembers(files);
  assert.ok(loaded.includes('index.js') && loaded.includes('providers/definitions/gc.js'), loaded.join(' '));
  assert.deepEqual(loaded.filter((m) => !EAGER.some((e) => e.test(m))), []);
  for (const lazy of ['session/session.js', 'session/thread-sessions.js', 'buffers/thread-buffer.js', 'providers/gc-provider.js', 'providers/gc-hook.js', 'ipc/diagnostics-server.js', 'ipc/diagnostics-client.js', 'format/trace-reader.js', 'api/flight-recorder.js']) {
    assert.ok(!loaded.includes(lazy), `${lazy} loaded by import alone`);
  }
});

// The tools that read traces share the schema's modules with the public API, in a bundle of their
// own: reading or converting a trace defines no provider and installs no host in the thread (which
// another copy of tracepipe, imported later, would then run its sessions through).
test("tracepipe/export and the trace reader load the shared bundle only: no provider, no host", { timeout: 90_000 }, async () => {
  const code = "await import('tracepipe/export'); await import('./dist/format/trace-reader.js'); process.stderr.write(`host ${Symbol.for('tracepipe.host') in globalThis}\\n`)";
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', LOG, '--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 });
  assert.match(stderr, /^host false$/m);
  assert.match(stderr, /^loaded bundles\/shared\.js$/m);
  assert.doesNotMatch(stderr, /^loaded (bundles\/public-api|api\/tracepipe-host|index)\.js$/m);
});

/** Node's own modules a fresh process loads running `code` (an ES module), as process.moduleLoadList names them. */
async function builtinsLoadedBy(code) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', `const before = new Set(process.moduleLoadList); ${code}; process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))));`],
    { cwd: ROOT, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), timeout: 60_000 },
  );
  return JSON.parse(stdout);
}

// Importing one of Node's modules as an ES module reads all of its exports, whose lazy ones load
// more (node:fs its streams, node:util parseArgs and the MIME parser), and worker_threads loads the
// worker machinery on the main thread: none of it is what defining providers needs.
test("import 'tracepipe' loads none of the worker machinery, parseArgs, the MIME parser or fs's streams", { timeout: 90_000 }, async () => {
  const added = await builtinsLoadedBy("await import('tracepipe')");
  assert.ok(added.includes('NativeModule module'), added.join(' '));
  const unwanted = ['worker_threads', 'internal/worker', 'internal/worker/io', 'internal/util/parse_args/parse_args', 'internal/mime', 'internal/fs/streams'];
  assert.deepEqual(added.filter((m) => unwanted.some((u) => m === `NativeModule ${u}`)), []);
});

// The session's header holds the process's id seed: drawn through node:crypto it compiled ~15 of
// Node's modules (7-13 ms, ~400 KB of garbage) before a session's first event. And the machinery
// takes Node's builtins through the process: an ES module import of node:fs loads its streams.
test("a session to a file, Node.Channels' included, loads none of node:crypto's modules nor fs's streams", { timeout: 90_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-crypto-'));
  try {
    const added = await builtinsLoadedBy(`const t = await import('tracepipe'); const s = await t.startSession({ providers: 'Runtime.GC,Node.Channels', output: ${JSON.stringify(join(dir, 'f.tptrace'))} }); await s.stop()`);
    assert.ok(added.includes('NativeModule module'), added.join(' '));
    assert.deepEqual(added.filter((m) => /crypto|internal\/fs\/streams/.test(m)), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// Every span's begin/end/run/fail are code generated per span; the built-in providers define spans
// nobody may ever begin, so each span's code is compiled on the first call of one of them.
test('import and defineProvider compile no span code; the first call of a span method does, once, and the methods work', { timeout: 90_000 }, async () => {
  const code = `
    const counted = (f) => new Proxy(f, { construct: (t, args) => (args[0] === 'span' && spanCode++, Reflect.construct(t, args)) });
    let spanCode = 0;
    globalThis.Function = counted(Function);
    const t = await import('tracepipe');
    const p = t.defineProvider('Test.LazySpan', { spans: { Op: { id: 1, fields: [['n', 'u32']] } } });
    const atDefinition = spanCode;
    const ran = p.Op.run(() => 7, 1);
    const token = p.Op.begin(1);
    p.Op.end(token);
    const events = [];
    const s = await t.startSession({ providers: 'Test.LazySpan', output: { onEvent: (e) => events.push(e.name) } });
    await p.Op.run(async () => {}, 2);
    await s.stop();
    process.stdout.write(JSON.stringify({ atDefinition, afterUse: spanCode, ran, token, events }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 });
  const r = JSON.parse(stdout);
  assert.deepEqual(r, { atDefinition: 0, afterUse: 1, ran: 7, token: 0, events: ['Op.Begin', 'Op.End'] });
});

// The built-in providers' events, spans and counters are made on first use; a bad built-in
// definition would throw there, so every one is made here.
test("import 'tracepipe' makes none of the built-in providers' event types; each makes its own, valid, on first use", { timeout: 90_000 }, async () => {
  const code = `
    const t = await import('tracepipe');
    const { providerRegistry } = await import('./dist/schema/provider.js');
    const typesAtImport = providerRegistry.allocateTypeIndex() - 1;
    const made = {};
    for (const p of [t.runtimeGC, t.runtimeEventLoop, t.runtimeGCHeap, t.runtimeCpuSampler, t.runtimeProcess, t.nodeChannels, t.runtimeCounters, t.runtimeHeapSnapshot]) {
      const first = Object.keys(p).find((k) => !['name', 'keywordMap', 'signature', 'onEnable', 'onDisable', 'onFlush', 'events', 'spans', 'counters'].includes(k));
      const member = p[first];
      if (!p.events.length || ![...p.events, ...p.spans, ...p.counters].some((m) => m === member)) throw new Error(p.name + ': ' + first + ' is not one of its members');
      made[p.name] = p.events.length;
    }
    process.stdout.write(JSON.stringify({ typesAtImport, made, typesAfter: providerRegistry.allocateTypeIndex() - 2 }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 });
  const r = JSON.parse(stdout);
  assert.equal(r.typesAtImport, 0);
  assert.equal(Object.keys(r.made).length, 8);
  assert.equal(r.typesAfter, Object.values(r.made).reduce((a, b) => a + b, 0));
});

test('the first session loads the machinery, and it runs the built-in providers', { timeout: 90_000 }, async () => {
  const code = `
    const t = await import('tracepipe');
    const events = [];
    const s = await t.startSession({ providers: 'Runtime.Process', rundown: true, output: { onEvent: (e) => events.push(e.name) } });
    await s.stop();
    if (!events.includes('Process')) throw new Error('no Process event: ' + events.join());
    if (!(s instanceof t.TraceSession) || ({}) instanceof t.TraceSession) throw new Error('instanceof TraceSession');
    const n = t.liveSessions().length;
    if (n !== 0) throw new Error(n + ' sessions left');`;
  // Where Node can require() ES modules, the first startSession loads the machinery that way, at once
  // (session-start.test.mjs checks what that gives), and Node 20's loader hooks do not see require():
  // without it, the machinery loads through import(), which the hooks log.
  const loaded = await withMembers(await loadedBy(code, { nodeArgs: process.features.require_module ? ['--no-experimental-require-module'] : [] }));
  for (const m of ['session/session.js', 'providers/process-provider.js', 'session/thread-sessions.js']) assert.ok(loaded.includes(m), `${m} not loaded by a session: ${loaded.join(' ')}`);
});

// A built-in provider's machinery runs when a session first enables it: a session of Runtime.GC runs
// the GC provider's callbacks and no other's. The default profile's four load with the session
// machinery, one bundle (their callbacks held until a session enables them); the others' load when
// a session first enables them: a session of Runtime.GC loads none of the sampler's, the channels'
// or the heap snapshot's.
const DEFAULT_PROFILE = ['Runtime.GC', 'Runtime.EventLoop', 'Runtime.GCHeap', 'Runtime.Process'];
const PROVIDER_MACHINERY = {
  'Runtime.GC': 'providers/gc-provider.js',
  'Runtime.EventLoop': 'providers/event-loop/event-loop-provider.js',
  'Runtime.GCHeap': 'providers/gc-heap-provider.js',
  'Runtime.CpuSampler': 'providers/cpu-sampler/cpu-sampler-provider.js',
  'Runtime.Process': 'providers/process-provider.js',
  'Node.Channels': 'providers/channels-provider.js',
  'Runtime.Counters': 'providers/counters/runtime-counters-provider.js',
  'Runtime.HeapSnapshot': 'providers/heap-snapshot/heap-snapshot-provider.js',
};

for (const requireModule of [true, false]) {
  test(`a session of Runtime.GC alone runs the GC provider's machinery and no other provider's, loads none outside the default profile, and records its pauses (${requireModule ? 'loaded at once' : 'through import()'})`, { timeout: 90_000 }, async (t) => {
    if (requireModule && !process.features.require_module) return t.skip('this Node cannot require() ES modules');
    // A provider has its callbacks once its machinery has loaded, however it loaded (Node 20's loader
    // hooks do not see require(), so they tell only for import()).
    const code = `
      const t = await import('tracepipe');
      const events = [];
      const s = await t.startSession({ providers: 'Runtime.GC', output: { onEvent: (e) => events.push(e.name) } });
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
      await s.stop();
      if (!events.includes('GCPause')) throw new Error('no GCPause: ' + events.join());
      const builtins = [t.runtimeGC, t.runtimeEventLoop, t.runtimeGCHeap, t.runtimeCpuSampler, t.runtimeProcess, t.nodeChannels, t.runtimeCounters, t.runtimeHeapSnapshot];
      process.stderr.write('with callbacks ' + builtins.filter((p) => p.onEnable).map((p) => p.name).join() + '\\n');`;
    const nodeArgs = ['--expose-gc', ...(!requireModule && process.features.require_module ? ['--no-experimental-require-module'] : [])];
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', LOG, ...nodeArgs, '--input-type=module', '-e', code], {
      cwd: ROOT,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))),
      timeout: 60_000,
    });
    assert.equal(/^with callbacks (.*)$/m.exec(stderr)?.[1], 'Runtime.GC', stderr);
    const loaded = await withMembers(stderr.split('\n').filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length)));
    if (!requireModule) assert.ok(loaded.includes(PROVIDER_MACHINERY['Runtime.GC']), loaded.join(' '));
    const others = Object.entries(PROVIDER_MACHINERY).filter(([name]) => !DEFAULT_PROFILE.includes(name)).map(([, m]) => m);
    assert.deepEqual(loaded.filter((m) => others.includes(m)), []);
  });
}

// The default profile's machinery loaded with the first session, which enabled only Runtime.GC: a
// later session that enables Runtime.Process and Runtime.EventLoop gets their callbacks then, once
// each, and their events.
test('a provider of the default profile that the first session left out runs its machinery when a later session enables it', { timeout: 90_000 }, async () => {
  const code = `
    const t = await import('tracepipe');
    const names = (p) => [t.runtimeGC, t.runtimeEventLoop, t.runtimeGCHeap, t.runtimeProcess].filter((x) => x.onEnable).map((x) => x.name).join();
    const first = await t.startSession({ providers: 'Runtime.GC', output: { onEvent: () => {} } });
    const afterFirst = names();
    await first.stop();
    const events = [];
    const second = await t.startSession({ providers: 'Runtime.Process,Runtime.EventLoop:*:Verbose', output: { onEvent: (e) => events.push(e.provider + '/' + e.name) } });
    const afterSecond = names();
    await new Promise((r) => setTimeout(r, 50));
    await second.stop();
    process.stdout.write(JSON.stringify({ afterFirst, afterSecond, events: [...new Set(events)] }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))),
    timeout: 60_000,
  });
  const { afterFirst, afterSecond, events } = JSON.parse(stdout);
  assert.equal(afterFirst, 'Runtime.GC');
  assert.equal(afterSecond, 'Runtime.GC,Runtime.EventLoop,Runtime.Process');
  assert.ok(events.includes('Runtime.Process/Process'), events.join(' '));
  assert.ok(events.some((e) => e.startsWith('Runtime.EventLoop/')), events.join(' '));
});

// The diagnostics server starts 100 ms after tracepipe/register loaded: a process that ends before
// then (a CLI, a build step, `node -e 0`) never loads it, and the application's start does not wait for it.
test('--import tracepipe/register with no session asked for loads the diagnostics server only, once the process has run a while', { timeout: 90_000 }, async () => {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', LOG, '--import', 'tracepipe/register', '--input-type=module', '-e', "process.stderr.write('started\\n'); await new Promise((r) => setTimeout(r, 200));"],
    { cwd: ROOT, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), timeout: 60_000 },
  );
  const lines = stderr.split('\n');
  const started = lines.indexOf('started');
  assert.ok(started >= 0, stderr);
  const loaded = (part) => part.filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length));
  const beforeStart = loaded(lines.slice(0, started));
  const afterStart = await withMembers(loaded(lines.slice(started)));
  assert.deepEqual(beforeStart, ['register.js'], 'what the import itself loads');
  assert.ok(afterStart.includes('ipc/diagnostics-server.js'), stderr);
  // The thread's host, record layouts and drop reasons are in the bundle register shares with the
  // public API (register imports the host by its own file, which re-exports it from there); the
  // session memory and the exit flush in the one it shares with the session machinery; what it does
  // and the seam to what loads on first use in its own, which loads with the server.
  const allowed = /^(register-start|machinery|bundle-script|ipc\/(diagnostics-server|exit-flush|ipc-transport)|schema\/(provider-host|record-abi|error-message|this-thread)|session\/(process-exit|native-addon|version)|buffers\/session-memory|format\/(drop-reason|format-error)|providers\/gc-pause-tally)\.js$/;
  assert.deepEqual(afterStart.filter((m) => !allowed.test(m)), []);
});

test('a process that ends soon after --import tracepipe/register loads no diagnostics server, though its loop turned', { timeout: 90_000 }, async (t) => {
  // The loop turns while Node loads the entry point, and the program turns it once more itself. A
  // machine so busy that the program ends 100 ms or more after the import proves nothing: try again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', LOG, '--import', 'data:text/javascript,globalThis.t0=performance.now()', '--import', 'tracepipe/register', '-e', "setImmediate(() => process.stderr.write(`ended ${performance.now() - globalThis.t0}\\n`))"],
      { cwd: ROOT, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), timeout: 60_000 },
    );
    const ended = Number(/^ended (\S+)$/m.exec(stderr)?.[1]);
    assert.ok(Number.isFinite(ended), stderr);
    if (ended >= 90) continue;
    const loaded = stderr.split('\n').filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length));
    assert.deepEqual(loaded, ['register.js']);
    return;
  }
  t.skip('the machine was too busy: every attempt ended 90 ms or more after the import');
});

test('--import tracepipe/register with TRACEPIPE_ENABLE=0 and TRACEPIPE_FLIGHT_RECORDER=0 loads no session machinery and starts no thread', { timeout: 90_000 }, async () => {
  const code = "const { subscribe } = await import('node:diagnostics_channel'); let threads = 0; subscribe('worker_threads', () => threads++); await new Promise((r) => setTimeout(r, 50)); process.stderr.write(`threads ${threads}\\n`);";
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', LOG, '--import', 'tracepipe/register', '--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), TRACEPIPE_ENABLE: '0', TRACEPIPE_FLIGHT_RECORDER: ' 0 ' },
    timeout: 60_000,
  });
  assert.match(stderr, /^threads 0$/m);
  const loaded = stderr.split('\n').filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length));
  assert.deepEqual(loaded.filter((m) => /^(session|drain|sinks|providers)\//.test(m)), [], stderr);
});

// readTrace's reader loads on first read: next() calls made while it loads wait for the one reader
// it starts, as the reader's own iterator queues them (two loads read the first event twice).
test('next() called twice at once on a fresh readTrace gives the first two events, once each', { timeout: 90_000 }, async () => {
  const code = `
    const t = await import('tracepipe');
    const file = process.env.TMPFILE;
    const p = t.defineProvider('Test.Twice', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });
    const s = await t.startSession({ providers: 'Test.Twice', output: file });
    for (let n = 0; n < 10; n++) p.Mark.write(n);
    await s.stop();
    const it = t.readTrace(file)[Symbol.asyncIterator]();
    const marks = [];
    const first = await Promise.all([it.next(), it.next()]);
    for (const r of first) marks.push(r.value.fields.n);
    for (let r = await it.next(); !r.done; r = await it.next()) marks.push(r.value.fields.n);
    if (marks.join() !== '0,1,2,3,4,5,6,7,8,9') throw new Error('events read: ' + marks.join());`;
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'tp-twice-'));
  try {
    await loadedBy(code, { env: { TMPFILE: join(dir, 'twice.tptrace') } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// The trace parser is an onEvent listener's (its own module, listener-consumer.js): a session to a
// file, a descriptor or a stream never loads it. Loaded through import() here, which the hooks see.
test('a session to a file never loads the trace parser; a session with an onEvent listener does', { timeout: 90_000 }, async () => {
  const code = `
    const t = await import('tracepipe');
    const file = await t.startSession({ providers: 'Runtime.GC', output: process.env.TMPFILE });
    await file.stop();
    process.stderr.write('file session done\\n');
    const listener = await t.startSession({ providers: 'Runtime.GC', output: { onEvent() {} } });
    await listener.stop();`;
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-parser-'));
  try {
    const nodeArgs = process.features.require_module ? ['--no-experimental-require-module'] : [];
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', LOG, ...nodeArgs, '--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), TMPFILE: join(dir, 'file.tptrace') },
      timeout: 60_000,
    });
    const lines = stderr.split('\n');
    const done = lines.indexOf('file session done');
    assert.ok(done >= 0, stderr);
    const loaded = (part) => part.filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length));
    const parser = ['session/listener-consumer.js', 'format/trace-parser.js'];
    assert.deepEqual(loaded(lines.slice(0, done)).filter((m) => parser.includes(m)), [], 'the file session');
    assert.deepEqual(loaded(lines.slice(done)).filter((m) => parser.includes(m)).sort(), parser.sort(), 'the listener session');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
