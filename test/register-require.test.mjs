// `--require tracepipe/register` (src/register.cts): a process made attachable without Node's ES
// module loader; a startup session, a flight recorder and TRACEPIPE_CPU_READY, which need --import,
// refused in one line unless --import tracepipe/register is given too (as `tracepipe collect` adds it).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { startCli, useTmpdir } from './helpers/ipc-processes.mjs';

const TMP = await useTmpdir(after);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REGISTER_URL = new URL('../dist/register.js', import.meta.url).href;
/** The environment without tracepipe's variables, plus `extra`. */
const envWith = (dir, extra = {}) => ({ ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_') && k !== 'NODE_OPTIONS')), TMPDIR: dir, ...extra });

async function eventNames(file) {
  const names = [];
  for await (const e of readTrace(file)) names.push(`${e.provider}/${e.name}`);
  return names;
}

/** The application's first line: the Node modules loaded before it ran. */
const APP = "console.log(JSON.stringify(process.moduleLoadList)); setInterval(() => {}, 1000);\n";
/** What resolving the package's exports loads of Node's ES module code (its resolver, not its loader). */
const RESOLVER = /^NativeModule internal\/modules\/(esm\/(resolve|get_format|formats|package_config)|package_json_reader)$/;

function startApp(t, app, dir, nodeArgs) {
  const child = spawn(process.execPath, [...nodeArgs, app], { cwd: ROOT, env: envWith(dir), stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const loaded = createInterface({ input: child.stdout })[Symbol.asyncIterator]().next().then((l) => JSON.parse(l.value));
  return { child, loaded, stderr: () => stderr };
}

test('--require tracepipe/register: no ES module loader before the application, and a client attaches', async (t) => {
  const dir = await mkdtemp(join(TMP, 't-'));
  const app = join(dir, 'app.cjs');
  await writeFile(app, APP);
  const untraced = startApp(t, app, dir, []);
  const required = startApp(t, app, dir, ['--require', 'tracepipe/register']);
  const before = new Set(await untraced.loaded);
  untraced.child.kill('SIGKILL');
  // On Node 20 the loader (its reads through fs/promises, its module jobs, readline) would be most of it.
  assert.deepEqual((await required.loaded).filter((m) => !before.has(m) && !RESOLVER.test(m)), []);
  const file = join(dir, 'attached.tptrace');
  const r = await startCli(t, dir, ['collect', '--pid', String(required.child.pid), '--providers', 'Runtime.Process', '--duration', '1s', '-o', file]).done;
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await eventNames(file)).includes('Runtime.Process/Process'));
  assert.equal(required.stderr(), '');
});

test('--require tracepipe/register in a worker thread: nothing, even once the server\'s timer has fired', async () => {
  // The worker reports what of Node it has loaded 300 ms in; the same worker untraced is the yardstick.
  const code = "const { Worker } = require('node:worker_threads'); new Worker(\"setTimeout(() => require('node:worker_threads').parentPort.postMessage(process.moduleLoadList), 300)\", { eval: true }).on('message', (m) => console.log(JSON.stringify(m)));";
  const run = (nodeArgs) => promisify(execFile)(process.execPath, [...nodeArgs, '-e', code], { cwd: ROOT, env: envWith(TMP), timeout: 60_000 });
  const untraced = new Set(JSON.parse((await run([])).stdout));
  const traced = await run(['--require', 'tracepipe/register']);
  assert.equal(traced.stderr, '');
  assert.deepEqual(JSON.parse(traced.stdout).filter((m) => !untraced.has(m) && !RESOLVER.test(m)), []);
});

/** The line `--require tracepipe/register` writes when nothing started what `names` ask for. */
const refusal = (names, them) => `tracepipe: nothing started: ${names} need${them ? '' : 's'} --import tracepipe/register: --require tracepipe/register cannot start ${them ? 'them' : 'it'} before the application runs\n`;
const REFUSED = refusal('TRACEPIPE_ENABLE, TRACEPIPE_FLIGHT_RECORDER, TRACEPIPE_CPU_READY', true);

test('--require tracepipe/register alone refuses a session in one line (the main thread\'s only): the application runs and exits as untraced', async () => {
  const dir = await mkdtemp(join(TMP, 't-'));
  const env = envWith(dir, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 's-{pid}.tptrace'), TRACEPIPE_FLIGHT_RECORDER: '16', TRACEPIPE_FLIGHT_DIR: dir, TRACEPIPE_CPU_READY: '1' });
  const code = "const { Worker } = require('node:worker_threads'); new Worker('0', { eval: true }).on('exit', () => { console.log('ran'); process.exitCode = 3; });";
  const r = await promisify(execFile)(process.execPath, ['--require', 'tracepipe/register', '-e', code], { cwd: ROOT, env, timeout: 60_000 }).catch((e) => e);
  assert.equal(r.code, 3);
  assert.equal(r.stdout, 'ran\n');
  assert.equal(r.stderr, REFUSED);
  assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.tptrace')), []);
});

const EMPTY_IMPORT = fileURLToPath(new URL('./helpers/empty-import.mjs', import.meta.url));
const APP_300MS = "setTimeout(() => console.log('ran'), 300)";

/** `node ...nodeArgs -e code` with TRACEPIPE_ENABLE=1 (and NODE_OPTIONS when given), cwd the repository: exit code, stdout, stderr and the trace's event names. */
async function startupRun(nodeArgs, { nodeOptions, code = "console.log('ran')", setup } = {}) {
  const dir = await mkdtemp(join(TMP, 't-'));
  await setup?.(dir);
  const output = join(dir, 'startup.tptrace');
  const env = envWith(dir, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions(dir) } : {}) });
  const r = await promisify(execFile)(process.execPath, [...nodeArgs(dir), '-e', code], { cwd: ROOT, env, timeout: 60_000 }).catch((e) => e);
  const events = await eventNames(output).catch(() => []);
  return { code: r.code ?? 0, stdout: r.stdout, stderr: r.stderr, events };
}

for (const [how, nodeArgs, nodeOptions, setup] of [
  ['on the command line', () => ['--require', 'tracepipe/register', '--import', 'tracepipe/register']],
  ['in NODE_OPTIONS, the import by URL (as tracepipe collect adds it)', () => [], () => `--require tracepipe/register --import=${REGISTER_URL}`],
  ['in NODE_OPTIONS, the import\'s path in double quotes', () => [], () => `--require tracepipe/register --import="${fileURLToPath(REGISTER_URL)}"`],
  [
    'through a module the application imports that imports it',
    (dir) => ['--require', 'tracepipe/register', '--import', join(dir, 'instrument.mjs')],
    undefined,
    (dir) => writeFile(join(dir, 'instrument.mjs'), `import ${JSON.stringify(REGISTER_URL)};\n`),
  ],
]) {
  test(`--require and --import tracepipe/register together ${how}: the import starts the session, nothing refused`, async () => {
    const r = await startupRun(nodeArgs, { nodeOptions, setup, code: APP_300MS });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'ran\n');
    assert.equal(r.stderr, '');
    assert.ok(r.events.includes('Runtime.Process/Process'), r.events.join(' '));
  });
}

for (const [how, code] of [
  ['an application that runs a while', APP_300MS],
  // Gone before the server's timer: told as it exits.
  ['an application that ends at once', "console.log('ran')"],
]) {
  test(`--require tracepipe/register with an --import of something else, ${how}: refused once, the application unchanged`, async () => {
    const r = await startupRun(() => ['--require', 'tracepipe/register', '--import', EMPTY_IMPORT], { code });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'ran\n');
    assert.equal(r.stderr, refusal('TRACEPIPE_ENABLE'));
    assert.deepEqual(r.events, []);
  });
}

// Slower than the server's timer to reach register (a large instrumentation module first): its
// session starts before the application all the same, and nothing is said.
for (const [how, setup, nodeArgs] of [
  [
    'an --import that reaches tracepipe/register after 200 ms',
    (dir) => writeFile(join(dir, 'slow.mjs'), `await new Promise((r) => setTimeout(r, 200));\nawait import(${JSON.stringify(REGISTER_URL)});\n`),
    (dir) => ['--require', 'tracepipe/register', '--import', join(dir, 'slow.mjs'), '-e', APP_300MS],
  ],
  [
    'an ES module application that imports tracepipe/register itself',
    (dir) => writeFile(join(dir, 'app.mjs'), `import ${JSON.stringify(REGISTER_URL)};\nsetTimeout(() => console.log('ran'), 300);\n`),
    (dir) => ['--require', 'tracepipe/register', join(dir, 'app.mjs')],
  ],
]) {
  test(`--require tracepipe/register with ${how}: its session starts, nothing refused`, async () => {
    const dir = await mkdtemp(join(TMP, 't-'));
    await setup(dir);
    const output = join(dir, 'startup.tptrace');
    const r = await promisify(execFile)(process.execPath, nodeArgs(dir), {
      cwd: ROOT,
      env: envWith(dir, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output }),
      timeout: 60_000,
    });
    assert.equal(r.stdout, 'ran\n');
    assert.equal(r.stderr, '');
    assert.ok((await eventNames(output)).includes('Runtime.Process/Process'));
  });
}

for (const [how, nodeArgs] of [
  ['', []],
  // Node then loads the application through its ES module loader, once every --import has run.
  [' after an --import of something else', ['--import', EMPTY_IMPORT]],
]) {
  test(`--require tracepipe/register, a CommonJS application${how}: told as soon as it runs 100 ms, not only at its exit`, async () => {
    const dir = await mkdtemp(join(TMP, 't-'));
    await writeFile(join(dir, 'app.cjs'), "setTimeout(() => process.stderr.write('ran\\n'), 300);\n");
    const r = await promisify(execFile)(process.execPath, ['--require', 'tracepipe/register', ...nodeArgs, join(dir, 'app.cjs')], { cwd: ROOT, env: envWith(dir, { TRACEPIPE_ENABLE: '1' }), timeout: 60_000 });
    // On one stream: the server's timer (100 ms) fires before the application's (300 ms).
    assert.equal(r.stderr, `${refusal('TRACEPIPE_ENABLE')}ran\n`);
  });
}

test('--require tracepipe/register, an ES module application in a package of no "type" that reaches tracepipe/register after 200 ms: nothing refused', async () => {
  // Node 20 first tries such an application as CommonJS, which leaves it in require's cache.
  const dir = await mkdtemp(join(TMP, 't-'));
  await writeFile(join(dir, 'package.json'), '{}\n');
  await writeFile(join(dir, 'slow.mjs'), `await new Promise((r) => setTimeout(r, 200));\nawait import(${JSON.stringify(REGISTER_URL)});\n`);
  await writeFile(join(dir, 'main.js'), "import './slow.mjs';\nsetTimeout(() => console.log('ran'), 100);\n");
  const output = join(dir, 'startup.tptrace');
  const r = await promisify(execFile)(process.execPath, ['--require', 'tracepipe/register', join(dir, 'main.js')], { cwd: ROOT, env: envWith(dir, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output }), timeout: 60_000 });
  assert.equal(r.stdout, 'ran\n');
  // Node's own warning of a package of no "type" may be there; none of tracepipe's.
  assert.doesNotMatch(r.stderr, /^tracepipe:/m);
  assert.ok((await eventNames(output)).includes('Runtime.Process/Process'));
});

test('--require tracepipe/register beside an --import Node refuses (a file URL it cannot take): Node\'s own error and exit code', async () => {
  const bad = () => ['--import=file:///tmp/a%2Fb.mjs'];
  const untraced = await startupRun(bad);
  const traced = await startupRun(() => ['--require', 'tracepipe/register', ...bad()]);
  assert.notEqual(untraced.code, 0);
  assert.equal(traced.code, untraced.code);
  assert.match(untraced.stderr, /ERR_INVALID_MODULE_SPECIFIER/);
  assert.match(traced.stderr, /ERR_INVALID_MODULE_SPECIFIER/);
});

// A parent that closed its end of the child's stderr: the line is lost, the exit code is not changed.
for (const [how, nodeArgs, env] of [
  ['--require tracepipe/register refusing a session', ['--require', 'tracepipe/register'], { TRACEPIPE_ENABLE: '1' }],
  ['--import tracepipe/register whose session cannot open its file', ['--import', 'tracepipe/register'], { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: '/nonexistent-dir/t.tptrace' }],
]) {
  test(`${how}, stderr closed: the application exits as untraced`, async () => {
    const dir = await mkdtemp(join(TMP, 't-'));
    const child = spawn(process.execPath, [...nodeArgs, '-e', 'setTimeout(() => {}, 300)'], { cwd: ROOT, env: envWith(dir, env), stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.destroy();
    const [code, signal] = await once(child, 'exit');
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });
}

// A broken install (register's own bundle throws as it loads, or what it does fails): each entry
// says so in one line and the application runs, exits and prints as untraced, whether register's
// work runs at once (a session asked for) or in the server's timer (an unhandled rejection there
// would have ended the application).
const SERVER_LINE = 'tracepipe: diagnostics server not started: a broken install\n';
const BROKEN = {
  'throws as it loads': (names) => `throw new Error('a broken install');\nexport const ${names.map((n) => `${n} = 0`).join(', ')};\n`,
  'fails as it runs': (names) => `const broken = async () => { throw new Error('a broken install'); };\nexport const ${names.map((n) => `${n} = broken`).join(', ')};\n`,
};
for (const [how, bundle] of Object.entries(BROKEN)) {
  for (const [entry, flag, env, lines] of [
    // The server is tried as well, and says why it did not start too.
    ['register.js', '--import', { TRACEPIPE_ENABLE: '1' }, `tracepipe: tracing not started: a broken install\n${SERVER_LINE}`],
    ['register.js', '--import', {}, SERVER_LINE],
    ['register.cjs', '--require', {}, SERVER_LINE],
  ]) {
    test(`${flag} of ${entry}, its bundle ${how}${env.TRACEPIPE_ENABLE ? ', a session asked for' : ''}: a line for what did not start, the application unchanged`, async () => {
      const dir = await mkdtemp(join(TMP, 't-'));
      await mkdir(join(dir, 'dist', 'bundles'), { recursive: true });
      for (const f of ['register.js', 'register.cjs', 'register-start.js']) await copyFile(join(ROOT, 'dist', f), join(dir, 'dist', f));
      // What the entries and register-start's one-line file name in it.
      const names = [...new Set([...(await readFile(join(ROOT, 'dist', 'register-start.js'), 'utf8')).matchAll(/\bm\d+\$\w+/g)].map((m) => m[0]))];
      await writeFile(join(dir, 'dist', 'bundles', 'register-own.js'), bundle([...names, 'startAsked', 'startServer']));
      await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
      const code = "setTimeout(() => { console.log('ran'); process.exitCode = 3; }, 300);";
      const r = await promisify(execFile)(process.execPath, [flag, join(dir, 'dist', entry), '-e', code], { cwd: dir, env: envWith(dir, env), timeout: 60_000 }).catch((e) => e);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, 'ran\n');
      assert.equal(r.stderr, lines);
    });
  }
}
