// Output variants, stop() results and flushing, and how soon a streamed event becomes visible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { threadId } from 'node:worker_threads';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { defineLoadProvider, startProducerWorker, writeLoad } from './helpers/producer.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const app = defineProvider('Output.App', {
  events: { Hello: { id: 1, fields: [['i', 'u32'], ['who', 'string'], ['big', 'u64'], ['raw', 'bytes']] } },
});
const LOAD = 'Output.Load';
const load = defineLoadProvider(LOAD);

function writeHellos(n) {
  for (let i = 0; i < n; i++) app.Hello.write(i, `h${i}`, 2n ** 63n + BigInt(i), Uint8Array.of(i & 255, 1, 2));
}

function checkHellos(events, n) {
  assert.equal(events.length, n);
  events.forEach((e, i) => {
    assert.deepEqual([e.provider, e.name, e.id, e.threadId, e.sequence], ['Output.App', 'Hello', 1, threadId, i]);
    assert.deepEqual(e.fields, { i, who: `h${i}`, big: 2n ** 63n + BigInt(i), raw: Uint8Array.of(i & 255, 1, 2) });
  });
}

async function readAll(source) {
  const events = [];
  for await (const e of readTrace(source)) events.push(e);
  return events;
}

test('file output: stop() resolves with { eventsWritten, eventsDropped, bytesWritten } matching the file', async (t) => {
  const file = join(await tempDir(t), 'out.tptrace');
  const s = await startSession({ providers: 'Output.App', output: file, bufferSizeMB: 2 });
  writeHellos(500);
  const stopping = s.stop();
  assert.equal(s.stop(), stopping, 'stop() is idempotent');
  const r = await stopping;
  assert.deepEqual([r.eventsWritten, r.eventsDropped, r.status], [500, 0, 'stopped']);
  assert.equal(r.bytesWritten, (await stat(file)).size);
  assert.equal((await stat(file)).mode & 0o077, 0, 'a trace holds argv, cwd and URLs: readable by its owner only');
  checkHellos(await readAll(file), 500);
  assert.equal(app.Hello.enabled, false);
  app.Hello.write(1, 'after stop', 0, new Uint8Array(0)); // nothing to write to: silently not recorded
  assert.equal((await readTrace(file).summary()).events, 500);
});

test('{ stream } output: the Writable receives a complete trace and is ended by stop()', async () => {
  const stream = new PassThrough();
  const chunks = [];
  stream.on('data', (c) => chunks.push(c));
  const s = await startSession({ providers: 'Output.App', output: { stream }, bufferSizeMB: 2 });
  writeHellos(300);
  const r = await s.stop();
  assert.equal(stream.writableFinished, true);
  const bytes = Buffer.concat(chunks);
  assert.deepEqual([r.eventsWritten, r.eventsDropped, r.bytesWritten, r.status], [300, 0, bytes.length, 'stopped']);
  checkHellos(
    await readAll(
      (async function* () {
        yield bytes;
      })(),
    ),
    300,
  );
});

test('{ onEvent } output: the listener gets every event, decoded, in order', async () => {
  const received = [];
  const s = await startSession({ providers: 'Output.App', output: { onEvent: (e) => received.push(e) }, bufferSizeMB: 2 });
  writeHellos(300);
  const r = await s.stop();
  assert.deepEqual([r.eventsWritten, r.eventsDropped, r.status], [300, 0, 'stopped']);
  assert.ok(r.bytesWritten > 0);
  checkHellos(received, 300);
  assert.deepEqual(Object.keys(received[0]).sort(), ['fields', 'id', 'level', 'name', 'provider', 'sequence', 'threadId', 'timestampNs', 'version']);
});

for (const kind of ['file', 'stream']) {
  test(`stop() flushes every event written before it was called, from every thread (${kind} output)`, async (t) => {
    const chunks = [];
    let output = join(await tempDir(t), 'flush.tptrace');
    if (kind === 'stream') {
      const stream = new PassThrough();
      stream.on('data', (c) => chunks.push(c));
      output = { stream };
    }
    const s = await startSession({ providers: LOAD, output, bufferSizeMB: 16 });
    const workers = [startProducerWorker(LOAD), startProducerWorker(LOAD)];
    t.after(() => Promise.all(workers.map((w) => w.close())));
    await Promise.all(workers.map((w) => w.ready));
    const replies = await Promise.all(workers.map((w) => w.request({ cmd: 'load', count: 7000, burst: 7000 })));
    const mainAttempted = await writeLoad(load, 5000, 5000);
    // The workers are idle now, their last chunks not full; the main thread stops at once.
    const r = await s.stop();
    const source =
      kind === 'file'
        ? output
        : (async function* () {
            yield Buffer.concat(chunks);
          })();
    const summary = await readTrace(source).summary();
    assert.equal(summary.complete, true);
    assert.equal(summary.threads[threadId].events, mainAttempted);
    for (const w of replies) assert.equal(summary.threads[w.threadId].events, w.attempted, `worker ${w.threadId}`);
    assert.deepEqual([summary.events, summary.dropped, r.eventsWritten], [19000, 0, 19000]);
  });
}

/** Lets the session go idle, then writes one event (and stays idle); resolves with the time of the write. */
async function idleLatency(write) {
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  await write();
  return t0;
}

const VISIBLE_WITHIN_MS = 1000;

test('streaming outputs: an event from a producer that then goes idle is visible within 1 s', async (t) => {
  // Listener output, main-thread producer.
  let heard;
  const arrived = new Promise((r) => (heard = r));
  const s1 = await startSession({ providers: 'Output.App', output: { onEvent: (e) => heard(performance.now()) } });
  const t1 = await idleLatency(() => app.Hello.write(1, 'idle', 0, new Uint8Array(0)));
  const listenerMs = (await arrived) - t1;
  await s1.stop();

  // Stream output read live by readTrace, main-thread producer.
  const stream = new PassThrough();
  const s2 = await startSession({ providers: 'Output.App', output: { stream } });
  const seen = (async () => {
    for await (const e of readTrace(stream)) if (e.fields.who === 'idle') return performance.now();
  })();
  const t2 = await idleLatency(() => app.Hello.write(2, 'idle', 0, new Uint8Array(0)));
  let timer;
  const streamMs = (await Promise.race([seen, new Promise((r) => (timer = setTimeout(() => r(Infinity), 5000)))])) - t2;
  clearTimeout(timer);
  await s2.stop();
  await seen;

  // Listener output, worker producer.
  let heardW;
  const arrivedW = new Promise((r) => (heardW = r));
  const s3 = await startSession({ providers: LOAD, output: { onEvent: (e) => e.name === 'Mark' && heardW(performance.now()) } });
  const w = startProducerWorker(LOAD);
  t.after(() => w.close());
  await w.ready;
  const t3 = await idleLatency(() => w.request({ cmd: 'mark', label: 'idle' }));
  const workerMs = (await arrivedW) - t3;
  await s3.stop();

  t.diagnostic(`idle-producer latency: listener ${listenerMs.toFixed(1)} ms, live stream reader ${streamMs.toFixed(1)} ms, worker → listener ${workerMs.toFixed(1)} ms`);
  assert.ok(listenerMs < VISIBLE_WITHIN_MS, `listener saw it after ${listenerMs} ms`);
  assert.ok(streamMs < VISIBLE_WITHIN_MS, `a live readTrace over the stream saw it after ${streamMs} ms`);
  assert.ok(workerMs < VISIBLE_WITHIN_MS, `listener saw the worker's event after ${workerMs} ms`);
});
