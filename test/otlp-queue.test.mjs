// The OTLP export's counts are settled under a lock shared by the drain and the sender thread: a side
// that finds it taken waits for the other (descheduled on a loaded machine while it holds it) rather
// than settling beside it and releasing the lock the other still holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { OtlpCounter, OtlpQueueState } from '../dist/sinks/otlp-queue.js';

const SETTLER = `
import { workerData, parentPort } from 'node:worker_threads';
import { OtlpCounter, OtlpQueueState } from ${JSON.stringify(new URL('../dist/sinks/otlp-queue.js', import.meta.url).href)};
const s = new OtlpQueueState(workerData);
s.settle(() => s.add(OtlpCounter.RequestsSent, 1));
parentPort.postMessage('settled');
`;

test('a side that finds the lock held waits for it, then settles holding it and lets it go', { timeout: 30_000 }, async () => {
  const state = new OtlpQueueState();
  Atomics.store(state.i32, OtlpCounter.Lock, 1);
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(SETTLER)}`), { workerData: state.sab });
  const settled = new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(state.get(OtlpCounter.RequestsSent), 0, 'nothing settled while the other side holds the lock');
  assert.equal(state.get(OtlpCounter.Lock), 1, 'the lock still held by the other side');
  Atomics.store(state.i32, OtlpCounter.Lock, 0);
  Atomics.notify(state.i32, OtlpCounter.Lock);
  await settled;
  assert.equal(state.get(OtlpCounter.RequestsSent), 1);
  assert.equal(state.get(OtlpCounter.Lock), 0);
  await worker.terminate();
});

test('a lock never let go (its holder died) is settled past within its bound, and left as it was', { timeout: 30_000 }, async () => {
  const state = new OtlpQueueState();
  Atomics.store(state.i32, OtlpCounter.Lock, 1);
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(SETTLER)}`), { workerData: state.sab });
  await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  assert.equal(state.get(OtlpCounter.RequestsSent), 1);
  assert.equal(state.get(OtlpCounter.Lock), 1, "the dead holder's lock is not released by a side that never took it");
  await worker.terminate();
});
