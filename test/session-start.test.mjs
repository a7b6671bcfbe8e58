// A session records the starting thread's events from the moment startSession is called (issue 24):
// what it writes before the drain runs waits in the session's buffer; providers' onEnable still run
// only once the drain runs (issue 3's contract), and nothing parks before there is a drain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const early = defineProvider('Test.EarlyStart', {
  events: { Mark: { id: 1, fields: [['n', 'u32']] } },
  onEnable() {
    enabledAt.push(writes);
  },
});
const enabledAt = [];
let writes = 0;

async function marks(file) {
  const ns = [];
  for await (const e of readTrace(file)) if (e.name === 'Mark') ns.push(e.fields.n);
  return ns;
}

test('an event written right after startSession is called, before it resolves, is in the trace; onEnable runs only once the drain runs', async (t) => {
  const file = join(await tempDir(t), 'early.tptrace');
  enabledAt.length = 0;
  writes = 0;
  const starting = startSession({ providers: 'Test.EarlyStart', output: file });
  assert.equal(early.Mark.enabled, true, 'enabled on the calling thread as startSession returns');
  early.Mark.write(1);
  writes++;
  assert.deepEqual(enabledAt, [], 'no onEnable before the drain runs');
  const session = await starting;
  assert.deepEqual(enabledAt, [1], 'onEnable ran once, after the early write, by the time startSession resolved');
  early.Mark.write(2);
  const r = await session.stop();
  assert.equal(r.eventsDropped, 0);
  assert.deepEqual(await marks(file), [1, 2]);
});

// Sessions started together reach their drains' start in any order (a Drop session's after the
// caller's synchronous code, a listener's after its parser loads): each has its own id, and a worker
// made once they run joins every one of them.
test('sessions started together have their own ids, and a worker thread made once they run writes into each', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const { Worker } = await import('node:worker_threads');
  const got = [[], []];
  const sessions = await Promise.all([
    startSession({ providers: 'Test.EarlyStart', output: join(dir, 'drop.tptrace') }),
    startSession({ providers: 'Test.EarlyStart', output: join(dir, 'block.tptrace'), bufferingMode: 'block' }),
    startSession({ providers: 'Test.EarlyStart', output: { onEvent: (e) => got[0].push(e.name) } }),
    startSession({ providers: 'Test.EarlyStart', output: { onEvent: (e) => got[1].push(e.name) } }),
  ]);
  // Stopped however the test ends: a session left running keeps the process alive.
  t.after(() => Promise.all(sessions.map((s) => s.stop().catch(() => {}))));
  assert.equal(new Set(sessions.map((s) => s.id)).size, 4, `ids ${sessions.map((s) => s.id).join()}`);
  const worker = new Worker(
    `import('${new URL('../dist/index.js', import.meta.url).href}').then(({ defineProvider }) => {
      const p = defineProvider('Test.EarlyStart', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });
      const { parentPort } = require('node:worker_threads');
      parentPort.postMessage(p.Mark._targets.length);
      p.Mark.write(7);
    });`,
    { eval: true },
  );
  // Heard from the start: a worker that has ended before the main thread takes its message gets its
  // message and its 'exit' emitted in one turn, so a listener added once the message is in never
  // hears the exit (nor does terminate() emit one for a worker already gone).
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const [targets] = await once(worker, 'message');
  const stuck = setTimeout(() => void worker.terminate(), 10_000); // ended, and failed below, if it does not end by itself
  const code = await exited;
  clearTimeout(stuck);
  assert.equal(code, 0, 'the worker exits by itself');
  assert.equal(targets, 4, 'the worker writes into every session');
  for (const s of sessions) await s.stop();
  assert.deepEqual(await marks(join(dir, 'drop.tptrace')), [7]);
  assert.deepEqual(await marks(join(dir, 'block.tptrace')), [7]);
  assert.ok(got.every((names) => names.includes('Mark')), JSON.stringify(got));
});

test('before the drain runs, a Block session parks the writer for it: what does not fit waits, nothing is lost', async (t) => {
  const file = join(await tempDir(t), 'early-block.tptrace');
  const starting = startSession({ providers: 'Test.EarlyStart', output: file, bufferingMode: 'block', bufferSizeMB: 0.25 });
  const n = 200_000; // ~3 MB of records: far more than a 0.25 MB buffer holds
  for (let i = 0; i < n; i++) early.Mark.write(i);
  const session = await starting;
  const r = await session.stop();
  assert.equal(r.eventsDropped, 0, 'nothing dropped');
  assert.equal(r.eventsWritten, n);
  const got = await marks(file);
  assert.equal(got.length, n);
  assert.ok(got.every((m, i) => m === i), 'every mark, in order');
});

test('a Block writer parked for a drain that cannot start gives up within its bound, even with no block timeout', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const starting = startSession({ providers: 'Test.EarlyStart', output: join(dir, 'no-such-dir', 'x.tptrace'), bufferingMode: 'block', bufferSizeMB: 0.25, blockTimeoutMs: 0 });
  const rejected = assert.rejects(starting, /cannot start session/);
  for (let i = 0; i < 200_000; i++) early.Mark.write(i);
  await rejected;
  assert.equal(early.Mark.enabled, false);
});

test('a session whose drain cannot start leaves nothing enabled, and what was written meanwhile goes nowhere', async (t) => {
  const dir = await tempDir(t);
  const starting = startSession({ providers: 'Test.EarlyStart', output: join(dir, 'no-such-dir', 'x.tptrace') });
  early.Mark.write(1);
  await assert.rejects(starting, /cannot start session/);
  assert.equal(early.Mark.enabled, false);
  const file = join(dir, 'after.tptrace');
  const session = await startSession({ providers: 'Test.EarlyStart', output: file });
  early.Mark.write(7);
  await session.stop();
  assert.deepEqual(await marks(file), [7]);
});

// Node's require() of an ES module that an import() under way has reached but not evaluated throws
// ("reading 'getStatus'"): a session started while the diagnostics server's modules still loaded
// failed (a startup session did, whenever loading took register past the server's 100 ms). Every
// number of loop turns between the two, so that some fall inside the server's load on any machine.
test('a session started while the diagnostics server is still loading starts', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const fixture = fileURLToPath(new URL('./fixtures/server-then-session.mjs', import.meta.url));
  const run = async (ticks) => (await promisify(execFile)(process.execPath, [fixture, String(ticks), join(dir, `s${ticks}.tptrace`)], { timeout: 60_000 })).stdout.trim();
  const outcomes = [];
  for (let ticks = 0; ticks <= 16; ticks += 2) outcomes.push(...(await Promise.all([run(ticks), run(ticks + 1)])));
  assert.deepEqual(outcomes.filter((o) => o !== 'started'), []);
});
