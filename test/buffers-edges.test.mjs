// Issue 9: the promises at the edges. Threads die anywhere, stop() comes at the wrong moment, several
// Block sessions run at once: nothing may hang, and read + dropped = attempted per thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, closeSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { checkOf, defineEdgeProvider, startEdgeWorker } from './helpers/edge-worker.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-edges-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const edge = defineEdgeProvider(defineProvider);
/** The smallest budget: 16 KiB, three chunks of 4 KiB. */
const TINY_MB = 1 / 64;

function newCtl() {
  return new Int32Array(new SharedArrayBuffer(4 * 128));
}

async function until(cond, what, ms = 20_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Per thread id: events read, drops, and the Tick `i` values seen (checked against their `check`). */
async function perThread(source) {
  const threads = new Map();
  for await (const e of readTrace(source)) {
    if (e.name !== 'Tick') continue;
    const t = threads.get(e.threadId) ?? { events: 0, is: [] };
    t.events++;
    t.is.push(e.fields.i);
    assert.equal(e.fields.check, checkOf(e.fields.i), `thread ${e.threadId}: event ${e.fields.i} carries a stale payload`);
    threads.set(e.threadId, t);
  }
  const s = await readTrace(source).summary();
  for (const [id, t] of threads) t.dropped = s.threads[String(id)]?.dropped ?? 0;
  for (const [id, st] of Object.entries(s.threads)) if (!threads.has(Number(id))) threads.set(Number(id), { events: 0, is: [], dropped: st.dropped });
  return { threads, summary: s };
}

/**
 * A FIFO output whose reader is this test: the drain blocks once the pipe is full, until `pump()` starts
 * a reader. `close()` (in each test's finally) pumps if the test did not get that far and stops the
 * session, so a failed check never leaves a Block session with no reader behind (the main thread's
 * later writes would park in it for good and hang every test after).
 */
async function fifoSession(name, options) {
  const fifo = join(dir, name);
  execFileSync('mkfifo', [fifo]);
  const opening = startSession({ providers: 'Test.Edge', output: fifo, bufferSizeMB: TINY_MB, bufferingMode: 'block', ...options });
  const rfd = openSync(fifo, 'r');
  const session = await opening;
  const out = join(dir, `${name}.tptrace`);
  let cat;
  const pump = () => {
    const ofd = openSync(out, 'w');
    cat = spawn('cat', [], { stdio: [rfd, ofd, 'inherit'] });
    closeSync(ofd);
    closeSync(rfd);
  };
  const done = () => new Promise((resolve) => (cat.exitCode !== null ? resolve() : cat.once('exit', resolve)));
  return {
    session,
    out,
    /** From now on a separate process copies the pipe to `out`. */
    pump,
    done,
    async close() {
      if (!cat) pump();
      await session.stop();
      await done();
    },
  };
}

test('a worker terminated while parked at the head of the line does not block later producers (its creator reclaims it)', { timeout: 60_000 }, async () => {
  const ctl = newCtl();
  const f = await fifoSession('dead-head', { blockTimeoutMs: 0 });
  const w = startEdgeWorker('flood', ctl, 0, { count: 1_000_000 });
  try {
    await until(() => f.session.parkedProducers === 1, 'the worker to park');
    await w.worker.terminate();
    await w.exited;
    assert.equal(f.session.parkedProducers, 0, 'the dead worker holds no ticket');
    f.pump();
    // The main thread writes more than the budget holds: it parks, and must get chunks as the drain frees them.
    for (let i = 0; i < 20_000; i++) edge.Tick.write(i, checkOf(i), i, 'main');
    const result = await f.session.stop();
    await f.done();
    assert.equal(result.status, 'stopped');
    const { threads, summary } = await perThread(f.out);
    assert.equal(summary.complete, true);
    const main = threads.get(threadId);
    assert.equal(main.events, 20_000, 'Block mode lost nothing on the main thread');
    assert.equal(main.dropped, 0);
    const dead = threads.get(result.producers.find((p) => p.threadId !== threadId).threadId);
    const attempted = Atomics.load(ctl, 1);
    assert.ok(dead.events + dead.dropped >= attempted && dead.events + dead.dropped <= attempted + 1, `dead worker: ${dead.events} read + ${dead.dropped} dropped vs ${attempted} attempted`);
  } finally {
    await w.worker.terminate();
    await f.close();
  }
});

test('a worker that dies parked where nobody sees its exit is skipped once its heartbeat stops', { timeout: 60_000 }, async () => {
  const ctl = newCtl();
  const f = await fifoSession('silent-head', { blockTimeoutMs: 0 });
  // The outer worker creates the flooding one, terminates it once it parks, and never turns its loop again.
  const outer = startEdgeWorker('nest', ctl, 0, { count: 1_000_000 });
  try {
    await until(() => f.session.parkedProducers === 1, 'the inner worker to park');
    Atomics.store(ctl, 96, 1);
    Atomics.notify(ctl, 96);
    // Killed while parked: its ticket stays held until the drain finds its beat stopped for HEAD_DEAD_MS,
    // which may already have happened by the time this thread looks again on a loaded machine.
    await until(() => Atomics.load(ctl, 97) === 1, 'the outer worker to terminate the inner one');
    f.pump();
    for (let i = 0; i < 20_000; i++) edge.Tick.write(i, checkOf(i), i, 'main');
    assert.equal(f.session.parkedProducers, 0, 'the dead worker was skipped: it holds no ticket');
    const result = await f.session.stop();
    await f.done();
    const { threads } = await perThread(f.out);
    assert.equal(threads.get(threadId).events, 20_000);
    assert.equal(threads.get(threadId).dropped, 0);
    assert.equal(result.status, 'stopped');
  } finally {
    Atomics.store(ctl, 0, 1);
    Atomics.notify(ctl, 0);
    await outer.worker.terminate();
    await f.close();
  }
});

test('stop() while a producer is parked: its event is counted as dropped (3 holders, 1 parked: 3 read + 1 dropped)', { timeout: 60_000 }, async () => {
  const ctl = newCtl();
  const file = join(dir, 'stop-parked.tptrace');
  const session = await startSession({ providers: 'Test.Edge', output: file, bufferSizeMB: TINY_MB, bufferingMode: 'block', blockTimeoutMs: 0 });
  const holders = [0, 1, 2].map((k) => startEdgeWorker('hold', ctl, k));
  const release = async (workers) => {
    Atomics.store(ctl, 0, 1);
    Atomics.notify(ctl, 0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  };
  let fourth;
  try {
    await until(() => [1, 2, 3].every((k) => Atomics.load(ctl, k) === 1), 'three holders to write and hold their chunks');
    fourth = startEdgeWorker('hold', ctl, 3);
    await until(() => session.parkedProducers === 1, 'the fourth producer to park');
  } catch (e) {
    // Nothing of this Block session may outlive a failed wait: the main thread's later writes would park in it.
    await session.stop();
    await release(fourth ? [...holders, fourth] : holders);
    throw e;
  }
  const result = await session.stop();
  await release([...holders, fourth]);
  const { threads, summary } = await perThread(file);
  assert.equal(summary.events, 3);
  assert.equal(summary.dropped, 1);
  assert.equal(result.eventsDropped, 1);
  assert.equal(result.producers.reduce((n, p) => n + p.droppedByReason.stopping, 0), 1, 'the drop says why: the session stopped');
  for (const t of threads.values()) assert.equal(t.events + t.dropped, 1);
});

test('two Block sessions and 8 writer threads: nobody deadlocks (a thread parks holding no chunk in any session)', { timeout: 120_000 }, async () => {
  const ctl = newCtl();
  const files = [join(dir, 'two-a.tptrace'), join(dir, 'two-b.tptrace')];
  const sessions = await Promise.all(files.map((output) => startSession({ providers: 'Test.Edge', output, bufferSizeMB: TINY_MB, bufferingMode: 'block', blockTimeoutMs: 0 })));
  const count = 20_000;
  const workers = Array.from({ length: 8 }, (_, k) => startEdgeWorker('flood', ctl, k, { count, sessions: 2 }));
  await Promise.all(workers.map((w) => w.exited));
  const results = await Promise.all(sessions.map((s) => s.stop()));
  for (const [k, file] of files.entries()) {
    assert.equal(results[k].status, 'stopped');
    const { threads } = await perThread(file);
    const writers = [...threads.values()].filter((t) => t.events + t.dropped > 0);
    assert.equal(writers.length, 8);
    for (const t of writers) {
      assert.equal(t.dropped, 0, 'Block mode with live drains drops nothing');
      assert.equal(t.events, count);
    }
  }
});

test('a consumer that stalls for good: parked producers give up after blockTimeoutMs, count the drop, and the app goes on', { timeout: 60_000 }, async () => {
  const f = await fifoSession('stalled', { blockTimeoutMs: 300 });
  try {
    const started = Date.now();
    for (let i = 0; i < 20_000; i++) edge.Tick.write(i, checkOf(i), i, 'main');
    const elapsed = Date.now() - started;
    f.pump();
    const result = await f.session.stop();
    await f.done();
    const main = result.producers.find((p) => p.threadId === threadId);
    assert.ok(main.droppedByReason['block-timeout'] > 0, `drops while the consumer stalls say why (${JSON.stringify({ dropped: main.droppedByReason, parks: main.parks, elapsed })})`);
    // Parks happen while the pipe still takes bytes; once it is full, one park times out and the rest drop at once.
    assert.ok(main.parks < 1000, `after a timed-out park the producer drops at once until the drain makes progress (${main.parks} parks)`);
    const { threads } = await perThread(f.out);
    assert.equal(threads.get(threadId).events + threads.get(threadId).dropped, 20_000);
    assert.ok(elapsed < 20_000, `the application kept running (${elapsed} ms for 20,000 writes)`);
  } finally {
    await f.close();
  }
});

test('a trace says why events were dropped (format 1.1 drop reasons), and an older total still adds up', { timeout: 60_000 }, async () => {
  const file = join(dir, 'reasons.tptrace');
  const session = await startSession({ providers: 'Test.Edge', output: file, bufferSizeMB: TINY_MB });
  edge.Tick.write('not a number', 0, 0, 'x');
  edge.Tick.write(1, checkOf(1), 1, 'x'.repeat(10_000));
  edge.Tick.writeAt(Number.NaN, 2, checkOf(2), 2, 'x');
  edge.Tick.write(3, checkOf(3), 3, 'ok');
  const result = await session.stop();
  const main = result.producers.find((p) => p.threadId === threadId);
  assert.deepEqual(main.droppedByReason, { full: 0, 'too-large': 1, 'invalid-argument': 2, stopping: 0, 'block-timeout': 0, overwritten: 0 });
  const s = await readTrace(file).summary();
  assert.equal(s.events, 1);
  assert.equal(s.dropped, 3);
  assert.deepEqual(s.dropReasons, { full: 0, 'too-large': 1, 'invalid-argument': 2, stopping: 0, 'block-timeout': 0, overwritten: 0 });
  assert.deepEqual(s.threads[String(threadId)].dropReasons, s.dropReasons);
  assert.ok(readFileSync(file).length > 0);
});
