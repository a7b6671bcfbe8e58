// Issue 3: non-lossy Block buffering. Real worker threads, real files and real FIFOs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, readSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProvider, Level, startSession, readTrace } from '../dist/index.js';

const dist = new URL('../dist/index.js', import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-block-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const FIELDS = [['a', 'f64'], ['b', 'f64'], ['c', 'u32'], ['d', 'i32']];
const flood = defineProvider('Test.Flood', { events: { Tick: { id: 1, level: Level.Informational, fields: FIELDS } } });

/** A worker that imports tracepipe, defines the same provider and writes `count` events when told to. */
function floodWorker(count) {
  const src = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.dist).then(({ defineProvider, Level }) => {
      const p = defineProvider('Test.Flood', { events: { Tick: { id: 1, level: Level.Informational, fields: ${JSON.stringify(FIELDS)} } } });
      parentPort.once('message', () => {
        let n = 0;
        for (let i = 0; i < workerData.count; i++) { p.Tick.write(1, i, i, -i); n++; }
        parentPort.postMessage({ done: n });
      });
      parentPort.postMessage({ ready: true });
    });`;
  const w = new Worker(src, { eval: true, workerData: { dist, count } });
  const ready = new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
  const done = ready.then(() => new Promise((resolve, reject) => w.once('message', (m) => resolve(m.done)).once('error', reject)));
  return { w, ready, go: () => w.postMessage('go'), done };
}

function mkfifo(name) {
  const p = join(dir, name);
  execFileSync('mkfifo', [p]);
  return p;
}

async function until(cond, what, ms = 20000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('main thread and 4 workers flood one 1 MB Block session: nothing lost, every producer progresses', async (t) => {
  const file = join(dir, 'fair.tptrace');
  const perProducer = 200_000;
  const session = await startSession({ providers: 'Test.Flood', output: file, bufferSizeMB: 1, bufferingMode: 'block' });
  assert.equal(session.bufferingMode, 'block');
  const workers = [0, 1, 2, 3].map(() => floodWorker(perProducer));
  await Promise.all(workers.map((w) => w.ready));
  workers.forEach((w) => w.go());
  for (let i = 0; i < perProducer; i++) flood.Tick.write(0, i, i, -i);
  const counts = await Promise.all(workers.map((w) => w.done));
  const result = await session.stop();
  await Promise.all(workers.map((w) => w.w.terminate()));
  assert.equal(result.status, 'stopped');
  assert.deepEqual(counts, [perProducer, perProducer, perProducer, perProducer]);
  assert.equal(result.eventsDropped, 0);
  assert.equal(result.eventsWritten, 5 * perProducer);
  const s = await readTrace(file).summary();
  assert.equal(s.events, 5 * perProducer);
  assert.equal(s.dropped, 0);
  const producing = Object.values(s.threads).filter((x) => x.events > 0);
  assert.equal(producing.length, 5);
  for (const th of producing) assert.equal(th.events, perProducer);
  const parked = result.producers.filter((p) => p.parks > 0);
  assert.ok(parked.length > 0, 'a 1 MB buffer flooded by 5 producers must make some of them park');
  const longest = result.producers.map((p) => p.longestParkNs / 1e6);
  t.diagnostic(`longest park per producer (ms): ${longest.map((x) => x.toFixed(2)).join(', ')}; spread ${(Math.max(...longest) - Math.min(...longest)).toFixed(2)} ms; parks ${result.producers.map((p) => p.parks).join(', ')}`);
});

test('stop() while 5 producers are parked releases them; they drop and count; stop never hangs', async () => {
  const fifo = mkfifo('abort.fifo');
  // The reader opens the FIFO but does not read yet, so the drain blocks once the pipe is full.
  const opening = startSession({ providers: 'Test.Flood', output: fifo, bufferSizeMB: 0.25, bufferingMode: 'block' });
  const rfd = openSync(fifo, 'r');
  const session = await opening;
  const perProducer = 1_000_000;
  const workers = [0, 1, 2, 3, 4].map(() => floodWorker(perProducer));
  await Promise.all(workers.map((w) => w.ready));
  workers.forEach((w) => w.go());
  await until(() => session.parkedProducers === 5, '5 parked producers');
  const stopping = session.stop();
  // Released producers finish their loops (dropping) while the drain is still stuck on the pipe.
  const counts = await Promise.all(workers.map((w) => w.done));
  assert.deepEqual(counts, [perProducer, perProducer, perProducer, perProducer, perProducer]);
  assert.equal(session.parkedProducers, 0);
  const chunks = [];
  const buf = Buffer.alloc(1 << 16);
  for (let n; (n = readSync(rfd, buf, 0, buf.length, null)) > 0; ) chunks.push(Buffer.from(buf.subarray(0, n)));
  closeSync(rfd);
  const result = await stopping;
  await Promise.all(workers.map((w) => w.w.terminate()));
  assert.equal(result.status, 'stopped');
  const aborted = result.producers.reduce((n, p) => n + p.dropped, 0);
  assert.ok(aborted >= 5, `each released producer counts the event it was parked on (got ${aborted})`);
  const s = await readTrace((async function* () { yield* chunks; })()).summary();
  assert.equal(s.complete, true);
  assert.equal(s.dropped, result.eventsDropped);
  assert.equal(s.events, result.eventsWritten);
});

test('rundown written while a Block session stops never parks: it drops and counts instead', async () => {
  const file = join(dir, 'rundown.tptrace');
  let attempted = 0;
  const rp = defineProvider('Test.Rundown', {
    events: { State: { id: 1, fields: FIELDS } },
    onDisable() {
      for (let i = 0; i < 500_000; i++) {
        rp.State.write(i, i, i, i);
        attempted++;
      }
    },
  });
  const session = await startSession({ providers: 'Test.Rundown', output: file, bufferSizeMB: 0.25, bufferingMode: 'block' });
  const result = await session.stop();
  assert.equal(attempted, 500_000);
  assert.equal(result.status, 'stopped');
  assert.ok(result.eventsDropped > 0, 'a 256 KB buffer cannot hold 20 MB of rundown');
  const s = await readTrace(file).summary();
  assert.equal(s.events + s.dropped, attempted);
  assert.equal(result.producers.reduce((n, p) => n + p.parks, 0), 0);
});

test('a listener session has no separate drain: Block degrades to Drop with a warning', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  const seen = [];
  const session = await startSession({ providers: 'Test.Flood', output: { onEvent: (e) => seen.push(e) }, bufferingMode: 'block', bufferSizeMB: 1 });
  assert.equal(session.bufferingMode, 'drop');
  flood.Tick.write(1, 2, 3, 4);
  await session.stop();
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  assert.ok(warnings.some((m) => /block/i.test(m) && /drop/i.test(m)), `expected a warning, got ${JSON.stringify(warnings)}`);
  assert.equal(seen.length, 1);
});

test('onEnable that synchronously writes 200 MB into a 1 MB Block session completes and loses nothing', async () => {
  const file = join(dir, 'heapwalk.tptrace');
  const records = Math.ceil((200 * 1024 * 1024) / 40); // 16-byte record header + 24-byte payload
  let ctxSeen;
  const walk = defineProvider('Test.HeapWalk', {
    events: { Node: { id: 1, fields: FIELDS } },
    onEnable(ctx) {
      ctxSeen = ctx;
      for (let i = 0; i < records; i++) walk.Node.write(i, i, i, i);
    },
  });
  const session = await startSession({ providers: 'Test.HeapWalk:0x1:4:depth=3;label="a;b"', output: file, bufferSizeMB: 1, bufferingMode: 'block' });
  assert.equal(ctxSeen.sessionId, session.id);
  assert.equal(ctxSeen.keywords, 1n);
  assert.equal(ctxSeen.level, 4);
  assert.deepEqual(ctxSeen.arguments, { depth: '3', label: 'a;b' });
  const result = await session.stop();
  assert.equal(result.eventsDropped, 0);
  assert.equal(result.eventsWritten, records);
  const s = await readTrace(file).summary();
  assert.equal(s.events, records);
  assert.equal(s.dropped, 0);
});

test('a consumer that dies (EPIPE) releases parked producers and fails the session; the app keeps running and the bytes so far are readable', async () => {
  const fifo = mkfifo('dead.fifo');
  const opening = startSession({ providers: 'Test.Flood', output: fifo, bufferSizeMB: 0.25, bufferingMode: 'block' });
  const rfd = openSync(fifo, 'r');
  const session = await opening;
  const workers = [0, 1].map(() => floodWorker(1_000_000));
  await Promise.all(workers.map((w) => w.ready));
  workers.forEach((w) => w.go());
  await until(() => session.parkedProducers === 2, '2 parked producers');
  // Take a few hundred KB (some whole blocks), then the consumer dies.
  const buf = Buffer.alloc(1 << 19);
  let n = 0;
  while (n < 300_000) n += readSync(rfd, buf, n, buf.length - n, null);
  closeSync(rfd);
  const result = await session.done;
  const counts = await Promise.all(workers.map((w) => w.done));
  await Promise.all(workers.map((w) => w.w.terminate()));
  assert.deepEqual(counts, [1_000_000, 1_000_000]);
  assert.equal(result.status, 'failed');
  assert.match(result.error.message, /EPIPE|broken pipe/i);
  assert.equal(session.state, 'failed');
  const events = [];
  await assert.rejects(async () => {
    for await (const e of readTrace((async function* () { yield buf.subarray(0, n); })())) events.push(e);
  }, (e) => e.name === 'TraceFormatError' && e.code === 'truncated' && typeof e.offset === 'number');
  assert.ok(events.length > 0, 'the intact blocks before the break are read');
  // And tracing still works afterwards in the same process.
  const again = await startSession({ providers: 'Test.Flood', output: join(dir, 'after.tptrace'), bufferingMode: 'block' });
  flood.Tick.write(1, 1, 1, 1);
  assert.equal((await again.stop()).eventsWritten, 1);
});

test('a drain thread that dies releases parked producers and fails the session', async () => {
  const fifo = mkfifo('crash.fifo');
  const opening = startSession({ providers: 'Test.Flood', output: fifo, bufferSizeMB: 0.25, bufferingMode: 'block' });
  const rfd = openSync(fifo, 'r');
  const session = await opening;
  const w = floodWorker(1_000_000);
  await w.ready;
  w.go();
  await until(() => session.parkedProducers === 1, 'a parked producer');
  // Simulate a crash of the drain thread: it ends without reporting.
  const drain = session['worker'];
  const terminating = drain.terminate();
  closeSync(rfd);
  await terminating;
  const result = await session.done;
  assert.equal(result.status, 'failed');
  assert.equal(await w.done, 1_000_000);
  await w.w.terminate();
});

test('a provider defined while a session runs is enabled at once and its onEnable can use its own binding', async () => {
  const file = join(dir, 'late-provider.tptrace');
  const session = await startSession({ providers: 'Test.Late', output: file, bufferingMode: 'block' });
  const contexts = [];
  const late = defineProvider('Test.Late', {
    events: { Hello: { id: 1, fields: [['n', 'u32']] } },
    onEnable(ctx) {
      contexts.push(ctx.sessionId);
      late.Hello.write(1);
    },
  });
  assert.equal(late.Hello.enabled, true, 'enabled as soon as it is defined');
  late.Hello.write(0);
  await Promise.resolve();
  assert.deepEqual(contexts, [session.id]);
  await session.stop();
  const s = await readTrace(file).summary();
  assert.equal(s.events, 2);
});

test('threads that wrote a little and went idle hand their chunks back: a Block session does not wait on them', async () => {
  const file = join(dir, 'idle.tptrace');
  const session = await startSession({ providers: 'Test.Flood', output: file, bufferSizeMB: 1, bufferingMode: 'block' });
  const idle = [];
  for (let k = 0; k < 15; k++) {
    const src = `
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.dist).then(({ defineProvider, Level }) => {
        const p = defineProvider('Test.Flood', { events: { Tick: { id: 1, level: Level.Informational, fields: ${JSON.stringify(FIELDS)} } } });
        p.Tick.write(1, 2, 3, 4);
        parentPort.postMessage('wrote');
        setInterval(() => {}, 1000); // stays alive, idle
      });`;
    const w = new Worker(src, { eval: true, workerData: { dist } });
    await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    idle.push(w);
  }
  // 15 idle threads could each hold one of the 15 chunks; the main thread must still get through.
  await new Promise((r) => setTimeout(r, 300));
  for (let i = 0; i < 100_000; i++) flood.Tick.write(0, i, i, -i);
  const result = await session.stop();
  await Promise.all(idle.map((w) => w.terminate()));
  assert.equal(result.eventsDropped, 0);
  assert.equal(result.eventsWritten, 100_015);
});
