// Issue 13: the flight recorder. A ring session keeps each thread's newest events; a dump (on a crash,
// a signal, a request over IPC or from code) is a complete trace whose lost ranges say what was
// overwritten, so kept + lost = written, per thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { threadId, Worker } from 'node:worker_threads';
import { defineProvider, readTrace, startFlightRecorder, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';
import { CLI, waitFor } from './helpers/ipc-processes.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/flight-target.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Per thread: the `i` of every Step kept, and the drops the trace reports. */
async function stepsByThread(file) {
  const threads = new Map();
  for await (const e of readTrace(file)) {
    if (e.name !== 'Step') continue;
    const t = threads.get(e.threadId) ?? { is: [] };
    t.is.push(e.fields.i);
    threads.set(e.threadId, t);
  }
  const s = await readTrace(file).summary();
  for (const [id, t] of threads) t.lost = s.threads[String(id)].dropped;
  return { threads, summary: s };
}

/** Kept events are the newest, contiguous, ending at the last written; kept + lost = written. */
function assertNewestKept(t, written, what) {
  assert.ok(t.is.length > 0, `${what}: some events kept`);
  assert.equal(t.is[t.is.length - 1], written - 1, `${what}: the last event kept is the last one written`);
  t.is.forEach((i, k) => assert.equal(i, t.is[0] + k, `${what}: kept events are contiguous`));
  assert.ok(t.is.length < written, `${what}: the ring wrapped`);
  assert.equal(t.is.length + t.lost, written, `${what}: kept + lost = written`);
}

function runFixture(args, { cwd = ROOT, env = {} } = {}) {
  const child = spawn(process.execPath, [FIXTURE, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { child, lines, stderr: () => stderr, exited: once(child, 'exit') };
}

function dumpsIn(dir) {
  return readdirSync(dir).filter((f) => /^tracepipe-flight-\d+-\d{8}T\d{9}Z\.tptrace$/.test(f)).map((f) => join(dir, f));
}

for (const [mode, why] of [['throw', /Error: boom after 60000/], ['reject', /Error: rejected after 60000/]]) {
  test(`an ${mode === 'throw' ? 'uncaught exception' : 'unhandled rejection'} dumps the last moments before the process dies; Node's own message and exit code are unchanged`, async (t) => {
    const dir = await tempDir(t);
    const p = runFixture([mode, '60000', dir]);
    const [code] = await p.exited;
    assert.equal(code, 1, 'the exit code is the one Node gives a fatal exception');
    assert.match(p.stderr(), why, 'the exception still prints');
    assert.match(p.stderr(), /tracepipe: flight recorder: the last moments are in /);
    const files = dumpsIn(dir);
    assert.equal(files.length, 1);
    const { threads, summary } = await stepsByThread(files[0]);
    assert.equal(summary.complete, true, 'the dump has its end-of-stream block');
    assert.equal(threads.size, 1);
    assertNewestKept([...threads.values()][0], 60_000, mode);
    assert.ok(summary.dropReasons.overwritten > 0);
  });
}

test('SIGUSR2 dumps while the process keeps running; a second dump holds the newer events', async (t) => {
  const dir = await tempDir(t);
  const p = runFixture(['signal', '30000', dir]);
  assert.equal((await p.lines.next()).value, 'written');
  p.child.kill('SIGUSR2');
  const first = (await p.lines.next()).value;
  assert.match(first, /^dumped /);
  p.child.stdin.write('more\n');
  assert.equal((await p.lines.next()).value, 'more');
  p.child.kill('SIGUSR2');
  const second = (await p.lines.next()).value;
  p.child.stdin.write('exit\n');
  const [code] = await p.exited;
  assert.equal(code, 0, 'the signal did not end the process');
  const a = await stepsByThread(first.split(' ')[1]);
  assertNewestKept([...a.threads.values()][0], 30_000, 'first dump');
  const b = await stepsByThread(second.split(' ')[1]);
  assertNewestKept([...b.threads.values()][0], 60_000, 'second dump');
});

test('tracepipe recorder dump --pid writes a recorder started by TRACEPIPE_FLIGHT_RECORDER; ps marks it', async (t) => {
  // Its own TMPDIR, where the target's diagnostics socket goes and the CLI looks for it.
  const tmp = await tempDir(t);
  const dir = await tempDir(t);
  const child = spawn(process.execPath, ['--import', 'tracepipe/register', FIXTURE, 'serve', '40000'], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_PROVIDERS: 'Test.Flight' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  assert.equal((await lines.next()).value, 'ready');
  const cli = async (...args) => {
    const c = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    c.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const [code] = await once(c, 'exit');
    return { code, out, err };
  };
  const ps = await waitFor('ps to list the target', async () => {
    const r = await cli('ps');
    return r.out.includes(String(child.pid)) ? r : undefined;
  });
  assert.match(ps.out, new RegExp(`${child.pid}\\s+\\S+\\s+1 \\(#\\d+ recorder [\\d.]+ KiB ≈ [\\d,]+ events of 32 B\\)`));
  const out = join(dir, 'remote.tptrace');
  const r = await cli('recorder', 'dump', '--pid', String(child.pid), '-o', out);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^dumped the flight recorder of process \d+ to .*remote\.tptrace: [\d,]+ events, [\d,]+ older overwritten/);
  const { threads, summary } = await stepsByThread(out);
  assert.equal(summary.complete, true);
  assertNewestKept([...threads.values()][0], 40_000, 'remote dump');
  child.stdin.write('exit\n');
  await once(child, 'exit');
  const none = await cli('recorder', 'dump', '--pid', String(process.pid));
  assert.equal(none.code, 1);
  assert.match(none.err, /^tracepipe: process \d+ is not attachable/);
});

test('ring wrap-around with the main thread and 2 workers: per thread the newest events are kept, contiguous, lost = written - kept', async (t) => {
  const dir = await tempDir(t);
  const fields = [['i', 'u32'], ['note', 'string']];
  const app = defineProvider('Test.Flight', { events: { Step: { id: 1, fields } } });
  const rec = await startFlightRecorder({ providers: 'Test.Flight', sizeMB: 0.5, dir, dumpOnCrash: false, signal: false });
  // Rounds: every thread writes its share of each round, so all three are still writing when the ring wraps.
  const ROUNDS = 40;
  const per = { main: 1000, w1: 1500, w2: 2000 };
  const worker = (n) => {
    const w = new Worker(
      `const { parentPort, workerData, threadId } = require('node:worker_threads');
       import(workerData.dist).then(({ defineProvider }) => {
         const app = defineProvider('Test.Flight', { events: { Step: { id: 1, fields: ${JSON.stringify(fields)} } } });
         let i = 0;
         parentPort.on('message', () => {
           for (let k = 0; k < workerData.n; k++) app.Step.write(i++, 'worker');
           parentPort.postMessage('done');
         });
         parentPort.postMessage(threadId);
       });`,
      { eval: true, workerData: { n, dist: new URL('../dist/index.js', import.meta.url).href } },
    );
    const ready = once(w, 'message').then(([id]) => id);
    return { w, ready, round: () => (w.postMessage('go'), once(w, 'message')) };
  };
  const workers = [worker(per.w1), worker(per.w2)];
  const ids = await Promise.all(workers.map((x) => x.ready));
  let i = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const rounds = workers.map((x) => x.round());
    for (let k = 0; k < per.main; k++) app.Step.write(i++, 'main');
    await Promise.all(rounds);
  }
  const d = await rec.dump();
  assert.match(d.path, /tracepipe-flight-\d+-\d{8}T\d{9}Z\.tptrace$/);
  await rec.stop();
  await Promise.all(workers.map(({ w }) => w.terminate()));
  const { threads, summary } = await stepsByThread(d.path);
  assert.equal(summary.complete, true);
  assertNewestKept(threads.get(threadId), ROUNDS * per.main, 'main thread');
  assertNewestKept(threads.get(ids[0]), ROUNDS * per.w1, 'worker 1');
  assertNewestKept(threads.get(ids[1]), ROUNDS * per.w2, 'worker 2');
  assert.equal(d.eventsWritten, summary.events);
  // The merged dump is in timestamp order: no reorder window needed.
  let prev = -Infinity;
  for await (const e of readTrace(d.path)) {
    assert.ok(e.timestampNs >= prev);
    prev = e.timestampNs;
  }
});

test('a ring session takes no output, and only a ring can be dumped', async () => {
  await assert.rejects(startSession({ providers: 'Test.Flight', bufferingMode: 'ring', output: 'x.tptrace' }), /a 'ring' session has no output/);
  const s = await startSession({ providers: 'Test.Flight', output: { onEvent() {} } });
  assert.throws(() => s.dump('x.tptrace'), /not a ring session/);
  await s.stop();
  await assert.rejects(startFlightRecorder({ signal: 'SIGKILL' }), /catchable signal/);
});
