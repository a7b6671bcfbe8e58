// The bundles a session loads run as scripts with V8's code cache, made for the Node that builds or
// installs tracepipe (src/bundle-script.ts, scripts/code-cache.mjs): a startup session uses
// every one of them; a damaged cache is rejected and a missing one skipped, and the bundle compiles
// from source, tracing as before. Each test works on a copy of dist/, which it writes caches into.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { writeCodeCaches } from '../scripts/code-cache.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPTS = ['bundles/public-api.js', 'bundles/register-shared.js', 'bundles/session-base.js', 'bundles/session-tools.js', 'bundles/shared.js', 'providers/default-profile.js', 'providers/gc-hook.js', 'session-machinery.js'];
// The caches' checksum is the native addon's: without it no cache is read or written.
const built = existsSync(join(ROOT, 'native/gc-hook/build/Release/code_cache.node')) && process.env.TRACEPIPE_GC_HOOK !== '0';
const skip = built ? false : 'the native addon is not built here (or turned off)';

/** A copy of the build (dist/, package.json, the native addons through a link) with code caches made for this Node. */
async function builtCopy(t) {
  const dir = await tempDir(t);
  await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'native'), join(dir, 'native'));
  for (const f of await readdir(join(dir, 'dist'), { recursive: true })) if (f.endsWith('.cache')) await rm(join(dir, 'dist', f));
  writeCodeCaches(join(dir, 'dist'));
  return dir;
}

/** The cache file of each script bundle in `dir`'s build, by the bundle's path under dist/. */
async function cachesOf(dir) {
  const files = (await readdir(join(dir, 'dist'), { recursive: true })).filter((f) => f.endsWith('.cache'));
  return Object.fromEntries(SCRIPTS.map((s) => [s, files.find((f) => f.startsWith(s.replace(/\.js$/, '.')))]));
}

/** Runs a startup session of the default profile in `dir`'s build; what became of each bundle's cache, and the trace's event names. */
async function startupSession(dir) {
  const output = join(dir, 'startup.tptrace');
  const report = `import(${JSON.stringify(pathToFileURL(join(dir, 'dist/bundle-script.js')).href)}).then((m) => console.log(JSON.stringify(m.bundleScriptRuns())))`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', pathToFileURL(join(dir, 'dist/register.js')).href, '-e', report], {
    env: { ...env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output },
    timeout: 60_000,
  });
  const caches = Object.fromEntries(JSON.parse(stdout).map((r) => [fileURLToPath(r.bundle).slice(join(dir, 'dist/').length), r.cache]));
  const names = new Set();
  for await (const e of readTrace(output)) names.add(`${e.provider}/${e.name}`);
  return { caches, names };
}

test('a startup session runs the bundles it loads as scripts, with the code caches made for this Node', { skip, timeout: 180_000 }, async (t) => {
  const dir = await builtCopy(t);
  for (const [bundle, cache] of Object.entries(await cachesOf(dir))) assert.ok(cache, `${bundle} has a code cache`);
  const { caches, names } = await startupSession(dir);
  assert.deepEqual(caches, Object.fromEntries(SCRIPTS.map((s) => [s, 'used'])));
  for (const name of ['Runtime.Process/Process', 'Runtime.GCHeap/HeapStats']) assert.ok(names.has(name), `${name} in the trace`);
});

test('a damaged code cache, or one made from a body since edited, is rejected and a missing one skipped: those bundles compile from source and trace as before', { skip, timeout: 180_000 }, async (t) => {
  const dir = await builtCopy(t);
  const caches = await cachesOf(dir);
  // Whole but for its bytes past V8's header (V8 itself aborted the process on it).
  const damaged = join(dir, 'dist', caches['session-machinery.js']);
  const bytes = await readFile(damaged);
  for (let i = 64; i < bytes.length; i++) bytes[i] ^= 0x5a;
  await writeFile(damaged, bytes);
  // Its body edited to the same length (V8 checks only the length, and ran the cache's old code).
  const body = join(dir, 'dist/bundles/session-tools.script.cjs');
  const text = await readFile(body, 'utf8');
  const edited = text.replace('"use strict";', "'use strict';");
  assert.ok(edited !== text && edited.length === text.length);
  await writeFile(body, edited);
  await rm(join(dir, 'dist', caches['bundles/public-api.js']));
  const run = await startupSession(dir);
  assert.equal(run.caches['session-machinery.js'], 'rejected');
  assert.equal(run.caches['bundles/session-tools.js'], 'rejected');
  assert.equal(run.caches['bundles/public-api.js'], 'missing');
  assert.equal(run.caches['providers/default-profile.js'], 'used');
  for (const name of ['Runtime.Process/Process', 'Runtime.GCHeap/HeapStats']) assert.ok(run.names.has(name), `${name} in the trace`);
});

// requireNow() runs a script bundle's body, and the bodies it imports, without their ES modules'
// files: a startup session reads register's two modules and no other through Node's loader. The
// application's import of tracepipe afterwards evaluates the bundles' ES modules, which hand back
// the exports of the bodies that ran: each body runs once, so there is one provider registry and
// one host: the application's session records its provider, and sees the startup session.
test("a startup session runs the script bundles without their ES modules; the application's import then gets the same exports", { skip, timeout: 180_000 }, async (t) => {
  const log = fileURLToPath(new URL('./fixtures/module-log.mjs', import.meta.url));
  const dir = await tempDir(t);
  {
    const output = join(dir, 'startup.tptrace');
    const code = `
      process.stderr.write('app\\n');
      const required = Object.keys((await import('node:module')).createRequire(import.meta.url).cache);
      const { bundleScriptRuns } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/bundle-script.js')).href)});
      const before = bundleScriptRuns().length;
      const t = await import('tracepipe');
      const p = t.defineProvider('Test.SameBundles', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });
      const s = await t.startSession({ providers: 'Test.SameBundles', output: ${JSON.stringify(join(dir, 'api.tptrace'))} });
      p.Mark.write(7);
      await s.stop();
      process.stdout.write(JSON.stringify({ required, before, runs: bundleScriptRuns().map((r) => r.bundle), live: t.liveSessions().length }));`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', log, '--import', 'tracepipe/register', '--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output },
      timeout: 60_000,
    });
    const [atStart] = stderr.split('\napp\n');
    const loaded = (text) => text.split('\n').filter((l) => l.startsWith('loaded ')).map((l) => l.slice('loaded '.length)).sort();
    assert.deepEqual(loaded(atStart), ['bundles/register-own.js', 'register.js']);
    const r = JSON.parse(stdout);
    // Nor through require(), which Node 20's loader hooks do not see: it would have put them in its cache.
    assert.deepEqual(r.required, []);
    const runs = r.runs.map((u) => fileURLToPath(u).slice(join(ROOT, 'dist/').length));
    assert.deepEqual([...runs].sort(), SCRIPTS, 'each script bundle ran once');
    assert.equal(r.before, SCRIPTS.length);
    assert.equal(r.live, 1, 'the startup session, seen through the import');
    const marks = [];
    for await (const e of readTrace(join(dir, 'api.tptrace'))) if (e.name === 'Mark') marks.push(e.fields.n);
    assert.deepEqual(marks, [7]);
  }
});

/** A copy of the build (dist/, package.json, the native addons through a link), as built: its caches no longer fit a body edited here, which then compiles from source. */
async function editedCopy(t, edit) {
  const dir = await tempDir(t);
  await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'native'), join(dir, 'native'));
  const body = join(dir, 'dist/session-machinery.script.cjs');
  await writeFile(body, edit(await readFile(body, 'utf8')));
  return dir;
}

async function runIn(dir, code) {
  await writeFile(join(dir, 'app.mjs'), code);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'app.mjs')], { cwd: dir, env, timeout: 60_000 });
  return stdout.trim();
}

// As Node's loader keeps a module, a body runs once whichever way it is reached: one that throws
// is not run again (its side effects twice), and what it threw is what every later ask gets,
// through the promise startSession returns, never thrown at its caller.
test('a script body that throws runs once: the session start rejects with what it threw, and so does its ES module', { timeout: 120_000 }, async (t) => {
  const dir = await editedCopy(t, (text) => text.replace('"use strict";', '"use strict"; globalThis.ran = (globalThis.ran ?? 0) + 1; throw new Error("boom");'));
  const out = await runIn(
    dir,
    `const t = await import('./dist/index.js');
    const outcome = [];
    try { await t.startSession({ providers: 'Runtime.GC', output: 'x.tptrace' }).catch((e) => outcome.push('rejected ' + e.message)); } catch (e) { outcome.push('threw ' + e.message); }
    await import('./dist/session-machinery.js').catch((e) => outcome.push('import rejected ' + e.message));
    console.log(JSON.stringify({ outcome, ran: globalThis.ran }));`,
  );
  assert.deepEqual(JSON.parse(out), { outcome: ['rejected boom', 'import rejected boom'], ran: 1 });
});

test('a script body that asks for itself while it runs runs once: one set of exports', { timeout: 120_000 }, async (t) => {
  // requireNow's name in register-own, as the build numbered its module there.
  const requireNow = /\b(m\d+\$requireNow) as requireNow\b/.exec(await readFile(fileURLToPath(new URL('../dist/schema/this-thread.js', import.meta.url)), 'utf8'))[1];
  const dir = await editedCopy(t, (text) => text.replace('"use strict";', `"use strict"; globalThis.ran = (globalThis.ran ?? 0) + 1; __imports[1].${requireNow}(__bundleUrl);`));
  const out = await runIn(
    dir,
    `const own = await import('./dist/bundles/register-own.js');
    const a = own.${requireNow}(new URL('./dist/session-machinery.js', import.meta.url));
    const b = await import('./dist/session-machinery.js');
    console.log(JSON.stringify({ ran: globalThis.ran, same: a.startStartupSession === b.startStartupSession }));`,
  );
  assert.deepEqual(JSON.parse(out), { ran: 1, same: true });
});

// The manifest names files beside the body: one that names anything else is not followed (the
// bundle loads through its ES module), and tracing, a worker's joining included, works as before.
test('a manifest that names anything but files beside its body is not followed; tracing and a worker joining work', { timeout: 120_000 }, async (t) => {
  const dir = await editedCopy(t, (text) => text.replace(/"cache":"session-machinery\.[0-9a-f]+\.cache"/, '"cache":"http://x/y.cache"'));
  await writeFile(join(dir, 'w.mjs'), "const t = await import('./dist/index.js'); const p = t.defineProvider('Test.Manifest', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } }); p.Mark.write(3);");
  const out = await runIn(
    dir,
    `import { Worker } from 'node:worker_threads';
    const t = await import('./dist/index.js');
    const s = await t.startSession({ providers: 'Test.Manifest', output: 'x.tptrace' });
    const w = new Worker(new URL('./w.mjs', import.meta.url));
    const errors = [];
    w.on('error', (e) => errors.push(e.message));
    await new Promise((r) => w.on('exit', r));
    await s.stop();
    console.log(JSON.stringify({ errors }));`,
  );
  assert.deepEqual(JSON.parse(out), { errors: [] });
  const marks = [];
  for await (const e of readTrace(join(dir, 'x.tptrace'))) if (e.name === 'Mark') marks.push(e.fields.n);
  assert.deepEqual(marks, [3]);
});
