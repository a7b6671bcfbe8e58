// A worker-thread producer: waits for the start signal, writes its share, reports when and how many.
import { parentPort, workerData } from 'node:worker_threads';
import { bench } from '../support/tick-provider.mjs';

const { count, start } = workerData;
const E = bench.Tick;
const flag = new Int32Array(start);
parentPort.postMessage({ type: 'ready', enabled: E.enabled });
Atomics.wait(flag, 0, 0);
const t0 = performance.timeOrigin + performance.now();
for (let i = 0; i < count; i++) {
  if (E.enabled) E.write(1.5, 2.5, i, -4);
}
const t1 = performance.timeOrigin + performance.now();
// Stay alive (and able to hear the session close) until the main thread has stopped the session.
parentPort.postMessage({ type: 'done', startMs: t0, endMs: t1 });
