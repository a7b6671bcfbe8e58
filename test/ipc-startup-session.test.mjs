// The startup session (TRACEPIPE_* variables read by tracepipe/register): its file is complete however
// the process ends, the process ends the way it would have without tracing, and bad settings cost
// one line on stderr, never the application.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../dist/index.js';
import { useTmpdir } from './helpers/ipc-processes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = await useTmpdir(after);
const N = 5000;
/** Whether a signal's death flushes the session (the native addon); without it the process still dies of the signal, untouched. */
const NATIVE = existsSync(join(ROOT, 'native/gc-hook/build/Release/signal_flush.node')) && process.env.TRACEPIPE_GC_HOOK !== '0';

const PRELUDE = `
import { defineProvider } from 'tracepipe';
const p = defineProvider('Test.Startup', { events: { Step: { id: 1, fields: [['n', 'u32'], ['what', 'string']] } } });
for (let i = 0; i < ${N}; i++) p.Step.write(i, 'step');
`;

/** Runs `body` after the prelude (which writes N events) under a startup session; resolves once it exits. */
async function run(name, body, { env = {}, onReady } = {}) {
  const output = join(dir, `${name}-{pid}.tptrace`);
  const child = spawn(process.execPath, ['--import', 'tracepipe/register', '--input-type=module', '-e', PRELUDE + body], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: dir, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output, TRACEPIPE_PROVIDERS: 'Test.Startup', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    stdout += d;
    if (onReady && stdout.includes('ready')) {
      onReady(child);
      onReady = undefined;
    }
  });
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  // A process that tracing keeps alive (a signal that no longer kills) fails its test instead of hanging it.
  const bound = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const [code, signal] = await once(child, 'exit');
  clearTimeout(bound);
  return { code, signal, stdout, stderr, file: output.replace('{pid}', String(child.pid)) };
}

async function assertComplete(file) {
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true, `${file}: ${s.error?.message}`);
  assert.equal(s.events, N);
  assert.equal(s.dropped, 0);
  return s;
}

test('normal end: the file is complete and the process exits 0 on its own', async () => {
  const r = await run('normal', `setTimeout(() => console.log('done'), 50);`);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'done\n');
  const s = await assertComplete(r.file);
  assert.match(r.file, /normal-\d+\.tptrace$/);
  assert.equal(s.header.pid, Number(/normal-(\d+)/.exec(r.file)[1]));
});

test('process.exit(): complete, with the exit code the application chose', async () => {
  const r = await run('exit', `process.exit(3);`);
  assert.equal(r.code, 3);
  await assertComplete(r.file);
});

test('uncaught exception: complete, and Node prints the error and exits 1 as it always does', async () => {
  const r = await run('uncaught', `setTimeout(() => { throw new Error('boom from the app'); }, 10);`);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Error: boom from the app\n\s+at /);
  await assertComplete(r.file);
});

test('unhandled rejection: complete, exit code 1', async () => {
  const r = await run('rejection', `Promise.reject(new Error('rejected in the app'));`);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /rejected in the app/);
  await assertComplete(r.file);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  test(`${signal}: complete, and the process still dies of ${signal}`, async () => {
    const r = await run(signal, `setInterval(() => {}, 1000); console.log('ready');`, { onReady: (child) => child.kill(signal) });
    assert.equal(r.code, null);
    assert.equal(r.signal, signal);
    if (NATIVE) await assertComplete(r.file);
  });
}

test('an application that handles SIGTERM itself keeps doing so; its exit completes the file', async () => {
  const body = `const t = setInterval(() => {}, 1000);
process.on('SIGTERM', () => { console.log('graceful'); setTimeout(() => { clearInterval(t); }, 50); });
console.log('ready');`;
  const r = await run('graceful', body, { onReady: (child) => child.kill('SIGTERM') });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'ready\ngraceful\n');
  await assertComplete(r.file);
});

/**
 * Runs the same program untraced (TRACEPIPE_ENABLE=0: the prelude's events are off) and traced, and
 * asserts both end the same way: the same exit code or the same signal, the same output.
 */
async function runBoth(name, body, { onReady, env = {} } = {}) {
  const untraced = await run(`${name}-off`, body, { onReady, env: { TRACEPIPE_ENABLE: '0', ...env } });
  const traced = await run(`${name}-on`, body, { onReady, env });
  assert.deepEqual({ code: traced.code, signal: traced.signal, stdout: traced.stdout }, { code: untraced.code, signal: untraced.signal, stdout: untraced.stdout }, `untraced stderr: ${untraced.stderr}\ntraced stderr: ${traced.stderr}`);
  assert.equal(existsSync(untraced.file), false);
  return traced;
}

test('with signal-exit (execa, write-file-atomic, foreground-child): SIGTERM and SIGINT still kill, and the trace is complete', async () => {
  for (const signal of ['SIGTERM', 'SIGINT']) {
    const body = `import { onExit } from 'signal-exit';
onExit((code, sig) => { console.log('signal-exit saw', sig); });
setInterval(() => {}, 1000); console.log('ready');`;
    const r = await runBoth(`signal-exit-${signal}`, body, { onReady: (child) => child.kill(signal) });
    assert.equal(r.signal, signal);
    assert.equal(r.stdout, `ready\nsignal-exit saw ${signal}\n`);
    if (NATIVE) await assertComplete(r.file);
  }
});

test('a SIGTERM that arrives while the main thread is blocked kills it then, as untraced, not when it yields', async () => {
  // Blocks for 20 s (or until killed): untraced, SIGTERM kills at once; a JavaScript listener would run only after the block.
  const body = `console.log('ready'); const end = Date.now() + 20000; while (Date.now() < end); console.log('ran to the end');`;
  const started = Date.now();
  const r = await runBoth('blocked', body, { onReady: (child) => setTimeout(() => child.kill('SIGTERM'), 200) });
  assert.equal(r.signal, 'SIGTERM');
  assert.ok(Date.now() - started < 30000, 'both runs ended well before their 20 s blocks would have');
  if (NATIVE) await assertComplete(r.file);
});

test('a signal the process sends itself, and one pending as the program ends, kill it with that signal (not exit 0)', async () => {
  const r = await runBoth('self-kill', `console.log('ready'); process.kill(process.pid, 'SIGTERM'); console.log('after the kill');`);
  assert.equal(r.signal, 'SIGTERM');
  assert.equal(r.stdout, 'ready\n');
  if (NATIVE) await assertComplete(r.file);
  const hup = await runBoth('self-hup', `process.kill(process.pid, 'SIGHUP');`);
  assert.equal(hup.signal, 'SIGHUP');
});

test("a signal that arrives while the process exits (its 'exit' listeners run) still kills it", async () => {
  // The kill lands inside the application's 'exit' listener, after tracepipe's own: the loop never turns again.
  const body = `setTimeout(() => {}, 50);
process.on('exit', () => { console.log('ready'); const end = Date.now() + 2000; while (Date.now() < end); console.log('exit listener ran to its end'); });`;
  const r = await runBoth('exiting', body, { onReady: (child) => child.kill('SIGTERM') });
  assert.equal(r.signal, 'SIGTERM');
  if (NATIVE) await assertComplete(r.file);
});

test('an application that stops listening and re-raises the signal dies of it, with a complete trace', async () => {
  const body = `const t = setInterval(() => {}, 1000);
const onTerm = () => { console.log('cleaning up'); process.off('SIGTERM', onTerm); process.kill(process.pid, 'SIGTERM'); };
process.on('SIGTERM', onTerm);
console.log('ready');`;
  const r = await runBoth('reraise', body, { onReady: (child) => child.kill('SIGTERM') });
  assert.equal(r.signal, 'SIGTERM');
  assert.equal(r.stdout, 'ready\ncleaning up\n');
  if (NATIVE) await assertComplete(r.file);
});

test('SIGTERM from outside to a process whose loop turns: the providers write their last events, as at exit', { skip: !NATIVE && 'needs the native signal flush' }, async () => {
  const env = { TRACEPIPE_PROVIDERS: 'Test.Startup,Runtime.Process,Runtime.GC' };
  const killed = await run('rundown-signal', `setInterval(() => {}, 1000); console.log('ready');`, { env, onReady: (child) => child.kill('SIGTERM') });
  assert.equal(killed.signal, 'SIGTERM');
  const s = await readTrace(killed.file).summary();
  assert.equal(s.complete, true);
  const ended = s.byEvent;
  assert.equal(ended['Test.Startup/Step'], N);
  // Runtime.Process writes its figures as the session starts and again as it stops; Runtime.GC says what it flushed.
  assert.equal(ended['Runtime.Process/ResourceUsage'], 2, JSON.stringify(ended));
  assert.ok(ended['Runtime.GC/GCPausesFlushed'] >= 1, JSON.stringify(ended));
});

test("an application with eight 'exit' listeners of its own gets no MaxListenersExceededWarning traced either", async () => {
  // tracepipe adds one 'exit' listener in all (it added three or four, one per module that needed it).
  const body = `for (let i = 0; i < 8; i++) process.on('exit', () => {}); console.log('listeners', process.listenerCount('exit') > 0);`;
  const r = await runBoth('exit-listeners', body);
  assert.equal(r.code, 0);
  assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning/);
  await assertComplete(r.file);
});

test('TRACEPIPE_BUFFERING_MODE and TRACEPIPE_BUFFER_SIZE_MB reach the session', async () => {
  const r = await run('block', '', { env: { TRACEPIPE_BUFFERING_MODE: 'block', TRACEPIPE_BUFFER_SIZE_MB: '2' } });
  const s = await assertComplete(r.file);
  assert.equal(s.header.session.bufferingMode, 'block');
  assert.equal(s.header.session.bufferSizeMB, 2);
  assert.equal(s.header.session.providers, 'Test.Startup:0xffffffffffffffff:5');
});

test('bad settings: one line on stderr, no session, the application runs normally', async () => {
  for (const [env, message] of [
    [{ TRACEPIPE_PROVIDERS: '1bad' }, /^tracepipe: startup session not started: TRACEPIPE_PROVIDERS: bad provider name '1bad'/],
    [{ TRACEPIPE_BUFFERING_MODE: 'lossless' }, /TRACEPIPE_BUFFERING_MODE must be drop or block, not 'lossless'/],
    [{ TRACEPIPE_BUFFER_SIZE_MB: 'lots' }, /TRACEPIPE_BUFFER_SIZE_MB must be a positive number/],
    [{ TRACEPIPE_ENABLE: 'yes' }, /TRACEPIPE_ENABLE must be 1 or 0/],
  ]) {
    const r = await run('bad', `console.log('app ran');`, { env });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'app ran\n');
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(existsSync(r.file), false);
  }
});

test("without '{pid}' in the path, child processes do not inherit the session (they would overwrite the file)", async () => {
  const output = join(dir, 'fixed.tptrace');
  const body = `import { execFileSync } from 'node:child_process';
console.log(JSON.stringify([process.env.TRACEPIPE_ENABLE ?? null, execFileSync(process.execPath, ['-e', 'console.log(process.env.TRACEPIPE_ENABLE ?? null)']).toString().trim()]));`;
  const r = await run('fixed', body, { env: { TRACEPIPE_OUTPUT: output } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [null, 'null']);
  await assertComplete(output);
  assert.equal(readdirSync(dir).filter((n) => n.endsWith('.tptrace') && n.startsWith('fixed')).length, 1);
});
