// Tracing must not change a descriptor the application shares with other processes. Node forwards a
// worker's output by piping it into the main thread's process.stdout and process.stderr, which it makes
// as the worker is made: a pipe's file description is then O_NONBLOCK, which the shell's next command,
// a child with inherited stdio or `fs.writeSync(1, …)` (EAGAIN) meet. tracepipe's own threads (the
// drain, the stall watchdog, the OTLP sender) are made so that those streams are made only when a
// thread prints (makeServiceWorker).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers/temp-dir.mjs';

const FIXTURE = new URL('./fixtures/stdio-flags.mjs', import.meta.url);
const O_NONBLOCK = 0o4000;
const linux = existsSync('/proc/self/fdinfo');

async function flagsOf(arg) {
  const child = fork(FIXTURE, [arg], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.resume();
  const [[seen], [code]] = await Promise.all([once(child, 'message'), once(child, 'exit')]);
  assert.equal(code, 0, stderr);
  return { seen, stderr };
}

test('a traced process leaves its stdout and stderr pipes as an untraced one does: not non-blocking', { skip: !linux && 'needs /proc/self/fdinfo', timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const untraced = await flagsOf('untraced');
  const traced = await flagsOf(join(dir, 't.tptrace'));
  assert.equal(untraced.seen.stdout & O_NONBLOCK, 0, 'untraced, a pipe on descriptor 1 is blocking');
  assert.deepEqual(traced.seen, untraced.seen, 'the flags of descriptors 1 and 2, traced and untraced');
  assert.equal(traced.stderr, '', 'tracing wrote nothing to stderr');
});

/** The fixture's process, run to its end (killed after 20 s: a process kept alive by the worker fails). */
async function serviceThreadProcess(mode) {
  const child = fork(new URL('./fixtures/service-thread-output.mjs', import.meta.url), [mode], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  let out = '';
  let err = '';
  let message;
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.on('message', (m) => (message = m));
  const [code, signal] = await once(child, 'exit');
  clearTimeout(killer);
  return { code, signal, out, err, message };
}

test("a service thread's output reaches the process's stdout and stderr, in order, and the main thread's streams are made only then", async () => {
  const { code, out, err, message } = await serviceThreadProcess('exits');
  assert.equal(code, 0, err);
  assert.equal(out, 'out line 2\nlast out line\n');
  assert.match(err, /^err line\n\(node:\d+\) Warning: a warning\n/);
  assert.deepEqual(message, { exited: true });
});

test('a service thread that printed and runs on does not keep the process alive', async () => {
  const { code, signal, err, message } = await serviceThreadProcess('lives');
  assert.equal(signal, null, 'the process ended on its own');
  assert.equal(code, 0, err);
  assert.deepEqual(message, { done: true });
});
