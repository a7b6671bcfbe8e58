// The per-process session limit for sessions started by code: every live session counts, starting
// ones too, and a refusal creates nothing.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { liveSessions, SessionError, SessionLimitError, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const original = process.env.TRACEPIPE_MAX_SESSIONS;
const setLimit = (value) => (process.env.TRACEPIPE_MAX_SESSIONS = value);
afterEach(() => {
  if (original === undefined) delete process.env.TRACEPIPE_MAX_SESSIONS;
  else process.env.TRACEPIPE_MAX_SESSIONS = original;
});

const isLimit = (n) => (e) =>
  e instanceof SessionLimitError &&
  e instanceof SessionError &&
  e.message === `process ${process.pid} already runs ${n} tracing session${n === 1 ? '' : 's'}, its limit (TRACEPIPE_MAX_SESSIONS=${n}); stop one or raise the limit`;

test('startSession past the limit throws SessionLimitError and creates nothing; a stopped session frees its place', async (t) => {
  setLimit('2');
  const dir = await tempDir(t);
  const file = (name) => join(dir, `${name}.tptrace`);
  const a = await startSession({ providers: 'Limit.A', output: file('a') });
  const b = await startSession({ providers: 'Limit.A', output: file('b') });
  await assert.rejects(startSession({ providers: 'Limit.A', output: file('c') }), isLimit(2));
  assert.equal(existsSync(file('c')), false, 'no drain ever opened the refused output');
  assert.deepEqual(liveSessions(), [a, b]);

  // A stopping session still holds its buffer and drain: it counts until it has finished.
  const stopping = a.stop();
  await assert.rejects(startSession({ providers: 'Limit.A', output: file('d') }), isLimit(2));
  assert.equal((await stopping).status, 'stopped');
  const c = await startSession({ providers: 'Limit.A', output: file('c') });
  assert.deepEqual(liveSessions(), [b, c]);
  await Promise.all([b.stop(), c.stop()]);
  assert.equal(liveSessions().length, 0);
});

test('sessions started at the same moment cannot all pass the limit: those still starting count', async (t) => {
  setLimit('3');
  const dir = await tempDir(t);
  const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => startSession({ providers: 'Limit.B', output: join(dir, `s${i}.tptrace`) })));
  const started = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  const refused = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
  assert.equal(started.length, 3);
  assert.equal(refused.length, 3);
  for (const e of refused) assert.ok(isLimit(3)(e), e.message);
  await Promise.all(started.map((s) => s.stop()));
  // A failed start gives its place back too.
  setLimit('1');
  await assert.rejects(startSession({ providers: 'Limit.B', output: join(dir, 'missing', 'x.tptrace') }), /cannot start session: .*ENOENT/);
  const s = await startSession({ providers: 'Limit.B', output: join(dir, 'ok.tptrace') });
  await s.stop();
});

test('a bad TRACEPIPE_MAX_SESSIONS is a clear SessionError', async (t) => {
  const dir = await tempDir(t);
  for (const value of ['0', '-1', '2.5', 'eight', '0x8']) {
    setLimit(value);
    await assert.rejects(
      startSession({ providers: 'Limit.C', output: join(dir, 'x.tptrace') }),
      (e) => e instanceof SessionError && !(e instanceof SessionLimitError) && e.message === `TRACEPIPE_MAX_SESSIONS must be a whole number of sessions, at least 1, not '${value}'`,
      value,
    );
  }
  assert.equal(existsSync(join(dir, 'x.tptrace')), false);
  assert.equal(liveSessions().length, 0);
});
