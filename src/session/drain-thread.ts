import { requireBuiltin } from '../schema/this-thread.js';
import type { WorkerOptions } from 'node:worker_threads';
import { makeServiceWorker, markServiceWorker } from './service-workers.js';
const { Worker } = requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');
type Worker = import('node:worker_threads').Worker;

const ENTRY = new URL('../workers/drain-worker.js', import.meta.url);
const OPTIONS: WorkerOptions = { execArgv: [], stdout: false, stderr: false };

/** A drain thread started before the session that will use it is known (warmDrainThread). */
let warm: Worker | undefined;

/** A new drain thread, known as tracepipe's own (Runtime.Process's rundown names its role). */
function spawn(options: WorkerOptions): Worker {
  const worker = makeServiceWorker(() => new Worker(ENTRY, options));
  markServiceWorker(worker, 'tracepipe-drain');
  return worker;
}

/**
 * Starts a drain thread now for a session about to start (the startup session, as `tracepipe/register`
 * loads): its isolate boots and loads its code on its own thread while this one loads the session
 * machinery, instead of after it. It waits for its session's settings (drainThread), keeps no process
 * alive meanwhile, and is ended by discardWarmDrainThread if no session takes it.
 */
export function warmDrainThread(): void {
  if (warm) return;
  const worker = spawn(OPTIONS);
  // A warm thread that fails or ends before a session takes it is never given one: the session starts
  // its own thread and reports that one's errors, not an exit whose cause went unheard.
  const unusable = (): void => {
    if (warm === worker) warm = undefined;
  };
  worker.on('error', unusable);
  worker.once('exit', unusable);
  worker.unref();
  warm = worker;
}

/** A drain thread for a session's settings: the warm one if there is one, a new one otherwise. */
export function drainThread(data: object): Worker {
  const worker = warm;
  warm = undefined;
  if (!worker) return spawn({ ...OPTIONS, workerData: data });
  worker.ref();
  worker.postMessage(data);
  return worker;
}

/** Ends the warm drain thread no session took. */
export function discardWarmDrainThread(): void {
  void warm?.terminate();
  warm = undefined;
}
