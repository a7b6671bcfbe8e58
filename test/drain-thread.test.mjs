// A drain thread started ahead of its session (issue 24): `tracepipe/register` starts the startup
// session's drain before loading the session machinery, so the two load at once. The session takes
// that thread (no second one), a thread nobody takes keeps no process alive and is ended, and a
// drain's entry is one bundled file that still finds what it loads by path (the native addon).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readTrace, startSession } from '../dist/index.js';
import { warmDrainThread } from '../dist/session/drain-thread.js';
// As register does before warming: the list Runtime.Process's rundown names threads from.
import '../dist/providers/live-workers.js';
import { tempDir } from './helpers/temp-dir.mjs';

const run = promisify(execFile);
const REGISTER = new URL('../dist/register.js', import.meta.url).pathname;

async function drainThreads(file) {
  const ids = [];
  for await (const e of readTrace(file)) if (e.name === 'Thread' && e.fields.role === 'tracepipe-drain' && e.fields.phase === 'start') ids.push(e.fields.threadId);
  return ids;
}

test('a session takes the drain thread warmed before it: the rundown names that thread as its only drain', async (t) => {
  const file = join(await tempDir(t), 'warm.tptrace');
  // A file in Drop mode is the native drain's where the addon is built: this is about the worker's.
  process.env.TRACEPIPE_NATIVE_DRAIN = '0';
  t.after(() => delete process.env.TRACEPIPE_NATIVE_DRAIN);
  const created = [];
  const onWorker = ({ worker }) => created.push(worker.threadId);
  subscribe('worker_threads', onWorker);
  try {
    warmDrainThread();
    assert.equal(created.length, 1, 'warming starts one thread at once');
    const session = await startSession({ providers: 'Runtime.Process', output: file });
    assert.equal(created.length, 1, 'the session started no thread of its own');
    const r = await session.stop();
    assert.equal(r.eventsDropped, 0);
  } finally {
    unsubscribe('worker_threads', onWorker);
  }
  assert.deepEqual(await drainThreads(file), created);
});

test('a warmed drain thread that no session takes keeps no process alive, and discarding it ends it', async () => {
  const code = `
    const { warmDrainThread, discardWarmDrainThread } = await import(${JSON.stringify(new URL('../dist/session/drain-thread.js', import.meta.url).href)});
    const { subscribe } = await import('node:diagnostics_channel');
    const started = [];
    subscribe('worker_threads', ({ worker }) => started.push(worker));
    warmDrainThread();
    if (process.argv[1] === 'discard') {
      setTimeout(() => {
        // Kept alive until the thread's exit is heard, however slow the machine: the parent's timeout bounds it.
        const keepAlive = setInterval(() => {}, 1000);
        started[0].once('exit', () => { clearInterval(keepAlive); console.log('exited', started.length); });
        discardWarmDrainThread();
      }, 200);
    }`;
  // Left alone: the process ends by itself (the test would time out otherwise).
  const alone = await run(process.execPath, ['--input-type=module', '-e', code, 'leave'], { timeout: 30_000 });
  assert.equal(alone.stdout, '');
  const discarded = await run(process.execPath, ['--input-type=module', '-e', code, 'discard'], { timeout: 30_000 });
  assert.equal(discarded.stdout.trim(), 'exited 1');
});

test('a startup session with a setting it refuses starts no session, warns once, and the application runs and exits as untraced', async (t) => {
  const dir = await tempDir(t);
  const r = await run(process.execPath, ['--import', REGISTER, '-e', 'console.log("app ran")'], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'x.tptrace'), TRACEPIPE_BUFFERING_MODE: 'sometimes' },
    timeout: 30_000,
  });
  assert.equal(r.stdout, 'app ran\n');
  assert.match(r.stderr, /^tracepipe: startup session not started: TRACEPIPE_BUFFERING_MODE must be drop or block/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

test('a startup session whose drain fails after taking the warm thread (an output it cannot open) leaves the flight recorder its own drain; the exit code is untouched', async (t) => {
  const dir = await tempDir(t);
  const r = await run(process.execPath, ['--import', REGISTER, '-e', 'throw new Error("app failed")'], {
    // The worker drain's case (the native drain, where it serves the session, takes no warm thread).
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'missing', 'x.tptrace'), TRACEPIPE_FLIGHT_RECORDER: '4', TRACEPIPE_FLIGHT_DIR: dir, TRACEPIPE_NATIVE_DRAIN: '0' },
    timeout: 30_000,
  }).then(
    () => assert.fail('the application throws'),
    (e) => e,
  );
  assert.equal(r.code, 1, 'the uncaught exception\'s exit code');
  assert.match(r.stderr, /^tracepipe: startup session not started: cannot start session: ENOENT/);
  assert.match(r.stderr, /app failed/);
  // The recorder's crash dump: the drain that wrote it is a new thread, not the warm one the failed session took.
  const dumps = readdirSync(dir).filter((f) => f.endsWith('.tptrace'));
  assert.equal(dumps.length, 1, `one crash dump: ${dumps}`);
  const drains = await drainThreads(join(dir, dumps[0]));
  assert.ok(drains.some((id) => id !== 1), `a drain other than thread 1, the warm one that ended with the failed session: ${drains}`);
});

test("tracepipe's own threads load their entries as one file each, Node's builtins through the process (the paths inside are tested by the OTLP, CPU sampler and watchdog tests)", () => {
  for (const name of ['drain-worker.js', 'event-loop-watchdog.js']) {
    const entry = readFileSync(new URL(`../dist/workers/${name}`, import.meta.url), 'utf8');
    assert.doesNotMatch(entry, /^import .* from ["']\.\.?\//m, `${name} imports none of tracepipe's other files`);
    assert.doesNotMatch(entry, /^\s*import ["']\.\.?\//m, name);
    // An ES module import of a builtin reads every export, and the lazy ones load more (node:fs its
    // streams): a new thread loaded 35 of Node's modules for what 16 give through the process.
    const imported = [...entry.matchAll(/^import .* from ["'](node:[^"']+)["']/gm)].map((m) => m[1]);
    assert.deepEqual(imported.filter((id) => id !== 'node:module'), [], `${name} takes Node's builtins through the process`);
    assert.match(entry, /requireBuiltin\("node:worker_threads"\)/, name);
  }
});
