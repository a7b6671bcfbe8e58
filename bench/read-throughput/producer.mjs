// What each thread of the read benchmark's trace writes: Ticks in bursts, yielding now and then so
// the drain keeps up. Run as a worker, it writes `workerData` of them.
import { isMainThread, workerData } from 'node:worker_threads';
import { bench } from '../support/tick-provider.mjs';

export async function produce(n) {
  for (let i = 0; i < n; i++) {
    bench.Tick.write(i * 0.5, i / 3, i, -i);
    if (i % 20_000 === 19_999) await new Promise((r) => setImmediate(r));
  }
}

if (!isMainThread) await produce(workerData);
