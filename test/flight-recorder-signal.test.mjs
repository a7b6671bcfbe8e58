// Issue 21, item 17: the flight recorder's dump signal. TRACEPIPE_FLIGHT_SIGNAL turns it off or picks
// another; and an application that listens to the signal itself keeps it, so SIGUSR2 does to it what
// it does untraced (nodemon restarts an application with SIGUSR2, and waits for it to die).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/temp-dir.mjs';
import { waitFor } from './helpers/ipc-processes.mjs';

const TARGET = fileURLToPath(new URL('./fixtures/flight-target.mjs', import.meta.url));
const GRACEFUL = fileURLToPath(new URL('./fixtures/graceful-usr2.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Starts `script` (with a recorder from the environment when `env` asks for one); resolves at its first line. */
async function start(t, script, args, env) {
  const tmp = await tempDir(t);
  const child = spawn(process.execPath, ['--import', 'tracepipe/register', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  return { child, first: first.value, lines, stderr: () => stderr, exited: once(child, 'exit') };
}

/** How the process ended, or 'running' if it had not within `ms`. */
async function endOf(p, ms = 5000) {
  const r = await Promise.race([p.exited, new Promise((resolve) => setTimeout(() => resolve('running'), ms))]);
  return r === 'running' ? r : { code: r[0], signal: r[1] };
}

const dumpsIn = (dir) => readdirSync(dir).filter((f) => f.startsWith('tracepipe-flight-'));

test('TRACEPIPE_FLIGHT_SIGNAL=off: SIGUSR2 ends the process as it does untraced, and writes nothing', async (t) => {
  const dir = await tempDir(t);
  const p = await start(t, TARGET, ['serve', '1000'], { TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_DIR: dir, TRACEPIPE_FLIGHT_SIGNAL: 'off' });
  assert.equal(p.first, 'ready', p.stderr());
  p.child.kill('SIGUSR2');
  assert.deepEqual(await endOf(p), { code: null, signal: 'SIGUSR2' });
  assert.deepEqual(dumpsIn(dir), []);
});

test('TRACEPIPE_FLIGHT_SIGNAL=SIGWINCH: that signal dumps, and SIGUSR2 keeps its default action', async (t) => {
  const dir = await tempDir(t);
  const p = await start(t, TARGET, ['serve', '1000'], { TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_DIR: dir, TRACEPIPE_FLIGHT_SIGNAL: 'SIGWINCH' });
  assert.equal(p.first, 'ready', p.stderr());
  p.child.kill('SIGWINCH');
  await waitFor('the SIGWINCH dump', () => dumpsIn(dir).length === 1, 20_000);
  p.child.kill('SIGUSR2');
  assert.deepEqual(await endOf(p), { code: null, signal: 'SIGUSR2' });
});

test("an application that handles SIGUSR2 itself and raises it again to die (nodemon's restart) dies of it traced as untraced, and no dump is written", async (t) => {
  const dir = await tempDir(t);
  for (const env of [{}, { TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_DIR: dir }]) {
    const p = await start(t, GRACEFUL, [], env);
    assert.equal(p.first, 'ready', p.stderr());
    p.child.kill('SIGUSR2');
    assert.equal((await p.lines.next()).value, 'cleaning up');
    assert.deepEqual(await endOf(p), { code: null, signal: 'SIGUSR2' }, env.TRACEPIPE_FLIGHT_RECORDER ? 'traced' : 'untraced');
  }
  assert.deepEqual(dumpsIn(dir), []);
});

test('a bad TRACEPIPE_FLIGHT_SIGNAL, or one that ends the process (SIGTERM): one line on stderr, no recorder, the application runs', async (t) => {
  for (const name of ['SIGNOPE', 'SIGTERM']) {
    const p = await start(t, TARGET, ['serve', '1000'], { TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_SIGNAL: name });
    assert.equal(p.first, 'ready');
    assert.equal(p.stderr(), `tracepipe: flight recorder not started: TRACEPIPE_FLIGHT_SIGNAL must be a catchable signal name such as SIGUSR2 (not SIGINT, SIGTERM or SIGHUP, which end the process), or 'off'; not '${name}'\n`);
    p.child.stdin.write('exit\n');
    assert.deepEqual(await endOf(p), { code: 0, signal: null });
  }
});
