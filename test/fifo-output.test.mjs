// An output that is a FIFO (issue 24's review): opening one for writing blocks until a reader comes,
// with no limit, in a thread nothing can interrupt. The drain waits for a reader at most
// FIFO_READER_WAIT_MS, so a startup session's application starts (untraced, with one warning) instead
// of never; a reader that comes within the bound gets the whole trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { FIFO_READER_WAIT_MS } from '../dist/sinks/private-file.js';
import { tempDir } from './helpers/temp-dir.mjs';

const REGISTER = new URL('../dist/register.js', import.meta.url).pathname;
const probe = defineProvider('Test.FifoLate', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });

async function fifo(t, name) {
  const p = join(await tempDir(t), name);
  execFileSync('mkfifo', [p]);
  return p;
}

test('a startup session whose output is a FIFO nobody reads warns once and the application runs as untraced', { timeout: FIFO_READER_WAIT_MS + 60_000 }, async (t) => {
  const out = await fifo(t, 'nobody.fifo');
  const r = await promisify(execFile)(process.execPath, ['--import', REGISTER, '-e', 'console.log("app ran"); process.exitCode = 3'], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: out },
    timeout: FIFO_READER_WAIT_MS + 50_000,
  }).catch((e) => e);
  assert.equal(r.code, 3, 'the exit code the application chose');
  assert.equal(r.stdout, 'app ran\n');
  assert.equal(r.stderr, `tracepipe: startup session not started: cannot start session: ${out} is a FIFO that no process opened for reading within ${FIFO_READER_WAIT_MS / 1000} s\n`);
});

test('a session to a FIFO whose reader opens it late gets the whole trace', { timeout: 60_000 }, async (t) => {
  const out = await fifo(t, 'late.fifo');
  const copy = join(await tempDir(t), 'copy.tptrace');
  const starting = startSession({ providers: 'Test.FifoLate', output: out });
  probe.Mark.write(1);
  // The reader comes after the drain has begun waiting for one.
  await new Promise((r) => setTimeout(r, 300));
  const reader = spawn('sh', ['-c', `exec cat "${out}" > "${copy}"`]);
  const readerDone = new Promise((resolve) => reader.on('exit', resolve));
  t.after(() => reader.kill('SIGKILL'));
  const session = await starting;
  probe.Mark.write(2);
  const r = await session.stop();
  assert.equal(r.status, 'stopped');
  await readerDone;
  const marks = [];
  for await (const e of readTrace(copy)) if (e.name === 'Mark') marks.push(e.fields.n);
  assert.deepEqual(marks, [1, 2]);
});

