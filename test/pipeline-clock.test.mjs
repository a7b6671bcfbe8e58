// One clock for every thread: worker timestamps are normalised onto the trace's monotonic clock, and
// the reader puts late-written events back in timestamp order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { readTrace, startSession } from '../dist/index.js';
import { defineLoadProvider, startProducerWorker } from './helpers/producer.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const PROVIDER = 'Clock.App';
const p = defineLoadProvider(PROVIDER);
// Generous: a thread's clock offset is estimated to well under a microsecond on a quiet machine.
const CLOCK_TOLERANCE_NS = 1e6;

async function readAll(file) {
  const trace = readTrace(file);
  const events = [];
  for await (const e of trace) events.push(e);
  return { events, outOfOrder: trace.outOfOrder };
}

test('main → worker → main hand-offs come out in causal order (one clock across threads)', async (t) => {
  const file = join(await tempDir(t), 'clock.tptrace');
  const before = startProducerWorker(PROVIDER); // learns of the session by broadcast
  t.after(() => before.close());
  await before.ready;
  const s = await startSession({ providers: PROVIDER, output: file, bufferSizeMB: 4 });
  const after = startProducerWorker(PROVIDER); // sees the session at start-up
  t.after(() => after.close());
  await after.ready;

  const expected = [];
  const windows = new Map();
  for (let round = 0; round < 20; round++) {
    for (const w of [before, after]) {
      const a = `main-${round}-${w === before ? 'b' : 'a'}`;
      p.Mark.write(a);
      expected.push(a);
      const label = `worker-${round}-${w === before ? 'b' : 'a'}`;
      const reply = await w.request({ cmd: 'mark', label });
      assert.ok(reply.enabled, `worker ${reply.threadId} saw the session`);
      windows.set(label, reply);
      expected.push(label);
    }
  }
  p.Mark.write('main-end');
  expected.push('main-end');
  await s.stop();

  const { events, outOfOrder } = await readAll(file);
  assert.equal(outOfOrder, 0);
  assert.deepEqual(events.map((e) => e.fields.label), expected, 'A (main) < B (worker) < C (main) for every hand-off');
  for (let i = 1; i < events.length; i++) assert.ok(events[i].timestampNs > events[i - 1].timestampNs, `${events[i].fields.label} after ${events[i - 1].fields.label}`);
  const threads = new Set(events.map((e) => e.threadId));
  assert.equal(threads.size, 3);
  assert.ok(threads.has(threadId));

  // Each worker event lies within the process-clock window its thread measured around the write.
  const header = (await readTrace(file).summary()).header;
  const traceOrigin = BigInt(header.clock.monotonicNs);
  for (const e of events) {
    const w = windows.get(e.fields.label);
    if (!w) continue;
    assert.equal(e.threadId, w.threadId);
    const lo = Number(BigInt(w.before) - traceOrigin) - CLOCK_TOLERANCE_NS;
    const hi = Number(BigInt(w.after) - traceOrigin) + CLOCK_TOLERANCE_NS;
    assert.ok(e.timestampNs >= lo && e.timestampNs <= hi, `${e.fields.label}: ${e.timestampNs} outside [${lo}, ${hi}]`);
  }
});

test('main-thread timestamps are nanoseconds since the header clock origin', async (t) => {
  const file = join(await tempDir(t), 'origin.tptrace');
  const s = await startSession({ providers: PROVIDER, output: file, bufferSizeMB: 1 });
  const h0 = process.hrtime.bigint();
  p.Mark.write('now');
  const h1 = process.hrtime.bigint();
  await s.stop();
  const { events } = await readAll(file);
  const origin = BigInt((await readTrace(file).summary()).header.clock.monotonicNs);
  const ts = events[0].timestampNs;
  assert.ok(ts >= Number(h0 - origin) - CLOCK_TOLERANCE_NS && ts <= Number(h1 - origin) + CLOCK_TOLERANCE_NS, `${ts} vs [${h0 - origin}, ${h1 - origin}]`);
});

test('an event written late, with a timestamp before events already drained, is read back in order', async (t) => {
  const file = join(await tempDir(t), 'late.tptrace');
  const s = await startSession({ providers: PROVIDER, output: file, bufferSizeMB: 1 });
  const early = performance.now();
  p.Mark.write('first-written');
  await new Promise((r) => setTimeout(r, 300)); // several drain passes: 'first-written' is in the stream
  p.Mark.writeAt(early, 'late');
  p.Mark.write('last');
  await s.stop();
  const { events, outOfOrder } = await readAll(file);
  assert.deepEqual(events.map((e) => e.fields.label), ['late', 'first-written', 'last']);
  assert.equal(outOfOrder, 0);
  assert.deepEqual(events.map((e) => e.sequence), [1, 0, 2], 'sequence numbers keep write order');
});
