// Issue 9: a randomized stress test with a fixed seed. Each iteration runs one to three sessions
// (Drop and Block mixed) over tiny budgets, floods them from worker threads, terminates workers at
// random moments (parked, writing, taking a chunk, before their first chunk) and stops the sessions
// at random moments. Every wait is bounded (a hang fails the test by its timeout), the control header
// stays intact, every record carries the payload it was written with, and per thread and session:
// read + dropped = attempted (for a worker killed mid-write, one attempt may be in flight).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace, startSession } from '../dist/index.js';
import { checkOf, startEdgeWorker } from './helpers/edge-worker.mjs';
import { seededRandom } from './helpers/seeded-random.mjs';

const SEED = Number(process.env.TRACEPIPE_STRESS_SEED ?? 9_2026_11_23);
const ITERATIONS = Number(process.env.TRACEPIPE_STRESS_ITERATIONS ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-stress-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** The control words that never change after creation: magic, chunk count and size, mode, slot limit, offsets. */
const constant = (words) => [0, 5, 6, 7, 9, 10, 11].map((i) => words[i]);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function traceThreads(file) {
  const threads = new Map();
  for await (const e of readTrace(file)) {
    if (e.name !== 'Tick') continue;
    assert.equal(e.fields.check, checkOf(e.fields.i), `${file}: thread ${e.threadId} event ${e.fields.i} has a stale payload`);
    const t = threads.get(e.threadId) ?? { events: 0, dropped: 0 };
    t.events++;
    threads.set(e.threadId, t);
  }
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true, `${file}: ${s.error?.message}`);
  for (const [id, st] of Object.entries(s.threads)) {
    const t = threads.get(Number(id)) ?? { events: 0, dropped: 0 };
    t.dropped = st.dropped;
    threads.set(Number(id), t);
  }
  return threads;
}

test(`${ITERATIONS} random iterations of sessions, floods, terminations and stops (seed ${SEED}; TRACEPIPE_STRESS_SEED to replay)`, { timeout: 600_000 }, async (t) => {
  const random = seededRandom(SEED);
  const pick = (n) => Math.floor(random() * n);
  const stats = { terminated: 0, parkedAtStop: 0, dropped: 0, events: 0 };
  for (let it = 0; it < ITERATIONS; it++) {
    const where = `iteration ${it} (seed ${SEED})`;
    const ctl = new Int32Array(new SharedArrayBuffer(4 * 128));
    const nSessions = 1 + pick(3);
    const specs = Array.from({ length: nSessions }, (_, k) => ({
      output: join(dir, `it${it}-s${k}.tptrace`),
      bufferingMode: random() < 0.6 ? 'block' : 'drop',
      bufferSizeMB: random() < 0.7 ? 1 / 64 : 1 / 8,
      blockTimeoutMs: random() < 0.5 ? 0 : 200,
    }));
    const sessions = await Promise.all(specs.map((s) => startSession({ providers: 'Test.Edge', ...s })));
    const headers = sessions.map((s) => [...s.memory.i32.slice(0, 12)]);
    const nWorkers = 2 + pick(3);
    const counts = Array.from({ length: nWorkers }, () => 2_000 + pick(20_000));
    const workers = counts.map((count, k) => startEdgeWorker('flood', ctl, k, { count, sessions: nSessions }));
    const ids = workers.map((w) => w.worker.threadId);
    const finished = new Array(nWorkers).fill(false);
    workers.forEach((w, k) => w.worker.once('message', () => (finished[k] = true)));
    // Workers start writing once every session is enabled in them (a few ms after this resolves).
    await Promise.all(workers.map((w) => w.ready()));
    // Kill some workers at random moments, then stop every session at a random moment.
    const killed = new Set();
    const kills = workers.map(async (w, k) => {
      if (random() < 0.4) {
        await sleep(pick(40));
        killed.add(k);
        await w.worker.terminate();
      }
    });
    await sleep(pick(100));
    const atStop = counts.map((_, k) => Atomics.load(ctl, 1 + k));
    stats.parkedAtStop += sessions.reduce((n, s) => n + s.parkedProducers, 0);
    const results = await Promise.all(sessions.map((s) => s.stop()));
    await Promise.all(kills);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    const final = counts.map((_, k) => Atomics.load(ctl, 1 + k));
    stats.terminated += killed.size;
    for (const [k, s] of sessions.entries()) {
      assert.equal(results[k].status, 'stopped', `${where}: session ${k} ${results[k].error?.message}`);
      assert.deepEqual(constant(s.memory.i32.slice(0, 12)), constant(headers[k]), `${where}: control header of session ${k} intact`);
      const threads = await traceThreads(specs[k].output);
      for (const [w, id] of ids.entries()) {
        const th = threads.get(id) ?? { events: 0, dropped: 0 };
        const accounted = th.events + th.dropped;
        stats.events += th.events;
        stats.dropped += th.dropped;
        const what = `${where}: session ${k} (${specs[k].bufferingMode}) worker ${w} (${killed.has(w) ? 'killed' : finished[w] ? 'finished' : 'running at stop'})`;
        // Everything attempted before stop() was called is accounted for; nothing is invented.
        if (!killed.has(w) || final[w] >= atStop[w]) assert.ok(accounted >= Math.min(atStop[w], final[w]), `${what}: ${th.events} read + ${th.dropped} dropped < ${atStop[w]} attempted before stop`);
        assert.ok(accounted <= final[w] + 1, `${what}: ${th.events} read + ${th.dropped} dropped > ${final[w]} attempted`);
        if (finished[w] && atStop[w] === counts[w]) assert.equal(accounted, counts[w], `${what}: read + dropped = attempted`);
        if (specs[k].bufferingMode === 'block' && specs[k].blockTimeoutMs === 0 && !killed.has(w) && finished[w] && atStop[w] === counts[w]) {
          assert.equal(th.dropped, 0, `${what}: Block mode without a timeout lost nothing before the stop`);
        }
      }
    }
  }
  t.diagnostic(`${ITERATIONS} iterations: ${stats.terminated} workers terminated, ${stats.parkedAtStop} producers parked when a stop began, ${stats.events} events read, ${stats.dropped} dropped`);
});
