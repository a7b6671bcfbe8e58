// Tracing must not change a descriptor the application shares with other processes. tracepipe's own
// threads (the drain, the stall watchdog, the OTLP sender) write their output to descriptors 1 and 2
// themselves: had Node forwarded it, the main thread's process.stdout and process.stderr would have been
// made, and a pipe's file description set O_NONBLOCK, which the shell's next command, a child with
// inherited stdio or `fs.writeSync(1, …)` (EAGAIN) then meet.
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

test("a service thread's output reaches the process's descriptors, in order, without making the main thread's process.stdout", async () => {
  // A process of its own, so that nothing has made its process.stdout before the worker writes.
  const child = fork(new URL('./fixtures/service-thread-output.mjs', import.meta.url), { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let out = '';
  let err = '';
  let message;
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.on('message', (m) => (message = m));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, err);
  assert.equal(out, 'out line\nA\ncallback ran\n');
  assert.match(err, /^err line\n\(node:\d+\) Warning: a warning\n/);
  if (message.fdinfo !== undefined) assert.equal(Number.parseInt(/^flags:\s*([0-7]+)/m.exec(message.fdinfo)[1], 8) & O_NONBLOCK, 0, "the main thread's stdout pipe stays blocking");
});
