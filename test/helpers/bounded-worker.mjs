// Runs an exported async function in a worker thread under a deadline. A hang in synchronous code
// cannot be interrupted from the thread that runs it, so "never hangs" is checked from outside.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** Resolves with `module[exportName](args)`'s value; rejects with its error or when `timeoutMs` passes. */
export function runBounded(moduleUrl, exportName, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { boundedRun: { moduleUrl: String(moduleUrl), exportName, args } } });
    let settled = false;
    const settle = (fn, v) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      fn(v);
    };
    const timer = setTimeout(() => settle(reject, new Error(`${exportName}(${JSON.stringify(args)}) did not finish within ${timeoutMs} ms`)), timeoutMs);
    worker.once('message', (m) => (m.error === undefined ? settle(resolve, m.value) : settle(reject, new Error(m.error))));
    worker.once('error', (e) => settle(reject, e));
    worker.once('exit', (code) => settle(reject, new Error(`${exportName} worker exited with code ${code} before answering`)));
  });
}

if (!isMainThread && workerData?.boundedRun) {
  const { moduleUrl, exportName, args } = workerData.boundedRun;
  try {
    const value = await (await import(moduleUrl))[exportName](args);
    parentPort.postMessage({ value });
  } catch (e) {
    parentPort.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
}
