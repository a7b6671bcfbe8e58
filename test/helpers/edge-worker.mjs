// A worker for the edge-case tests: it writes synchronously (never yielding, so its idle-seal timer
// never runs) and reports its attempts through shared memory, which survives worker.terminate().
//
// workerData: { mode, ctl: Int32Array over a SharedArrayBuffer, index, count, provider }
//   ctl[0]            release flag: 'hold' and 'nest' block until it is non-zero
//   ctl[1 + index]    attempts made so far by this worker (stored after each write returns)
//   ctl[64 + index]   1 once the worker is ready (its provider is enabled in every session)
//   ctl[96]           'nest': set by the test once the inner worker parked; ctl[97]: 1 once 'nest' has
//                     called terminate() on it
// modes: 'flood' (write `count` events), 'hold' (write one event, then block until released),
//        'nest' (start a flooding worker, terminate it once it parks, then block until released:
//        this thread never turns its event loop again, so it never sees that worker's exit)
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const dist = new URL('../../dist/index.js', import.meta.url).href;

export function startEdgeWorker(mode, ctl, index, { count = 0, sessions = 1 } = {}) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { edge: { mode, ctl, index, count, sessions } } });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  let error;
  worker.on('error', (e) => (error = e));
  return {
    worker,
    exited,
    /** Resolves once the worker writes into every session; rejects if it dies first or takes a minute. */
    async ready() {
      let gone = false;
      void exited.then(() => (gone = true));
      const deadline = Date.now() + 60_000;
      while (Atomics.load(ctl, 64 + index) === 0) {
        if (gone) throw new Error(`edge worker ${index} exited before it was ready${error ? `: ${error.message}` : ''}`);
        if (Date.now() > deadline) throw new Error(`edge worker ${index} not ready after 60 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
    },
  };
}

export function defineEdgeProvider(defineProvider) {
  return defineProvider('Test.Edge', {
    events: { Tick: { id: 1, fields: [['i', 'u32'], ['check', 'u32'], ['x', 'f64'], ['pad', 'string']] } },
  });
}

/** Every Tick carries `check = f(i)`: a record whose payload is stale (a reordered publish) fails it. */
export function checkOf(i) {
  return (Math.imul(i, 0x9e3779b1) ^ 0x5bd1e995) >>> 0;
}

async function runEdge({ mode, ctl, index, count, sessions }) {
  const { defineProvider } = await import(dist);
  const p = defineEdgeProvider(defineProvider);
  // `_targets`: the sessions this thread writes the event into (enabled alone says "at least one").
  while (p.Tick._targets.length < sessions) await new Promise((r) => setTimeout(r, 1));
  Atomics.store(ctl, 64 + index, 1);
  if (mode === 'flood') {
    for (let i = 0; i < count; i++) {
      p.Tick.write(i, checkOf(i), i * 0.5, 'x');
      Atomics.store(ctl, 1 + index, i + 1);
    }
  } else if (mode === 'hold') {
    p.Tick.write(0, checkOf(0), 0, 'held');
    Atomics.store(ctl, 1 + index, 1);
    Atomics.wait(ctl, 0, 0);
  } else if (mode === 'nest') {
    const inner = new Worker(new URL(import.meta.url), { workerData: { edge: { mode: 'flood', ctl, index: index + 1, count, sessions } } });
    inner.on('error', () => undefined);
    // Wait (synchronously, this loop never turns again) until the inner worker is parked.
    while (Atomics.load(ctl, 96) === 0) Atomics.wait(ctl, 96, 0, 5);
    void inner.terminate();
    Atomics.store(ctl, 97, 1);
    Atomics.notify(ctl, 97);
    Atomics.wait(ctl, 0, 0);
  }
  parentPort.postMessage('done');
}

if (!isMainThread && workerData?.edge) void runEdge(workerData.edge);
