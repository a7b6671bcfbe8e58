// A producer that runs the same code on the main thread and in worker threads: each thread defines
// its own copy of the provider (as an application module would) and writes when told to.
import { isMainThread, parentPort, threadId, Worker, workerData } from 'node:worker_threads';
import { defineProvider } from '../../dist/index.js';

export function defineLoadProvider(name) {
  return defineProvider(name, {
    events: {
      Load: { id: 1, fields: [['i', 'u32'], ['thread', 'u32'], ['x', 'f64'], ['y', 'i32']] },
      Mark: { id: 2, fields: [['label', 'string']] },
    },
  });
}

/** Waits (without blocking the event loop) until `ev` is enabled; false after `timeoutMs`. */
export async function waitEnabled(ev, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ev.enabled) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
  return true;
}

/**
 * Writes `count` Load events in bursts of `burst`, yielding to the event loop between bursts, and
 * returns how many were attempted (written while enabled). Load's `i` is the attempt number. After
 * each burst the count so far is stored in `progress[0]` (an Int32Array on shared memory), if given.
 * With `paceUs`, each write is followed by that long a busy wait (a thread at work between events).
 */
export async function writeLoad(p, count, burst = 1000, progress, paceUs = 0) {
  let attempted = 0;
  for (let i = 0; i < count; i++) {
    if (p.Load.enabled) {
      p.Load.write(attempted, threadId, i * 0.25, -i);
      attempted++;
    }
    if (paceUs > 0) for (const until = performance.now() + paceUs / 1000; performance.now() < until; );
    if (i % burst === burst - 1) {
      if (progress) Atomics.store(progress, 0, attempted);
      await new Promise((r) => setImmediate(r));
    }
  }
  return attempted;
}

/** Starts a worker running the producer loop below; `request(msg)` resolves with its reply. */
export function startProducerWorker(providerName) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { producer: { providerName } } });
  const waiting = [];
  worker.on('message', (m) => waiting.shift()?.resolve(m));
  worker.on('error', (e) => {
    for (const w of waiting.splice(0)) w.reject(e);
  });
  const ready = new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  return {
    worker,
    ready,
    request(msg) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        worker.postMessage(msg);
      });
    },
    close: () => worker.terminate(),
  };
}

if (!isMainThread && workerData?.producer) {
  const p = defineLoadProvider(workerData.producer.providerName);
  parentPort.on('message', async (msg) => {
    if (msg.cmd === 'load') {
      const enabled = await waitEnabled(p.Load);
      parentPort.postMessage({ threadId, enabled, attempted: enabled ? await writeLoad(p, msg.count, msg.burst, msg.progress, msg.paceUs) : 0 });
    } else if (msg.cmd === 'compute-then-write') {
      // One event, then (flags[0] = 1) a computation that lasts until flags[1] is set and `computeMs`
      // after, then `count` events: all without a turn of the event loop, so the thread hears of a stop
      // only after them.
      const enabled = await waitEnabled(p.Load);
      let attempted = 0;
      if (enabled) {
        p.Load.write(attempted++, threadId, 0, 0);
        Atomics.store(msg.flags, 0, 1);
        while (Atomics.load(msg.flags, 1) === 0);
        for (const until = performance.now() + msg.computeMs; performance.now() < until; );
        for (let i = 0; i < msg.count; i++) if (p.Load.enabled) p.Load.write(attempted++, threadId, i, i);
      }
      parentPort.postMessage({ threadId, enabled, attempted });
    } else if (msg.cmd === 'mark') {
      const enabled = await waitEnabled(p.Mark);
      // The process clock around the write, to check the event lands on the trace clock.
      const before = process.hrtime.bigint();
      if (enabled) p.Mark.write(msg.label);
      const after = process.hrtime.bigint();
      parentPort.postMessage({ threadId, enabled, before: String(before), after: String(after) });
    } else if (msg.cmd === 'exit') {
      parentPort.close();
    }
  });
  parentPort.postMessage({ threadId, ready: true });
}
