// A termination signal while a startup session's drain is still starting (issue 24's review): the
// drain may have its output open already, so the signal flush must end that stream too, not only those
// of sessions that run. The window is held open for the test by an output that is a FIFO whose reader
// comes late: the drain waits for it (at most FIFO_READER_WAIT_MS) before it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const REGISTER = new URL('../dist/register.js', import.meta.url).pathname;
// Node catches SIGINT and SIGTERM itself (to reset the terminal); only the signal flush catches SIGHUP.
const SIGHUP_BIT = 1n << 0n;

/** Whether the signal flush's native handler is in place in `pid` (it takes SIGINT, SIGTERM and SIGHUP). */
function flushHeld(pid) {
  const line = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return line !== undefined && (BigInt(`0x${line}`) & SIGHUP_BIT) !== 0n;
}

test('SIGTERM while a startup session waits for its drain: the process dies of it as untraced, and the trace is complete', { timeout: 90_000 }, async (t) => {
  const dir = await tempDir(t);
  const fifo = join(dir, 'late.fifo');
  const copy = join(dir, 'copy.tptrace');
  execFileSync('mkfifo', [fifo]);
  const app = spawn(process.execPath, ['--import', REGISTER, '-e', 'setInterval(() => {}, 1000)'], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: fifo },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => app.kill('SIGKILL'));
  let stderr = '';
  app.stderr.on('data', (d) => (stderr += d));
  const died = new Promise((resolve) => app.on('exit', (code, signal) => resolve({ code, signal })));
  // The signal flush is held (the native handler in place) just before the session starts, whose
  // drain then waits for the FIFO's reader.
  const deadline = Date.now() + 60_000;
  while (!flushHeld(app.pid)) {
    assert.ok(Date.now() < deadline, `no signal flush held within 60 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  app.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  const reader = spawn('sh', ['-c', `exec cat "${fifo}" > "${copy}"`]);
  const readerDone = new Promise((resolve) => reader.on('exit', resolve));
  t.after(() => reader.kill('SIGKILL'));
  assert.deepEqual(await died, { code: null, signal: 'SIGTERM' }, stderr);
  await readerDone;
  const s = await readTrace(copy).summary();
  assert.equal(s.complete, true, `${s.error?.message}; ${stderr}`);
  assert.equal(s.header.pid, app.pid);
});
