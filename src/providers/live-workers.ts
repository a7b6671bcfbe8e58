import { isMainThread, requireBuiltin } from '../schema/this-thread.js';
import type { Worker } from 'node:worker_threads';
const { subscribe } = requireBuiltin('node:diagnostics_channel') as typeof import('node:diagnostics_channel');

/**
 * Worker threads alive now, for Runtime.Process's rundown. Node announces a new Worker only on the
 * 'worker_threads' channel, so the list is kept from the moment sessions load (src/machinery.ts), not
 * from the moment a session first enables Runtime.Process (it costs one call per Worker created).
 */
export const liveWorkers = new Map<number, Worker>();
if (isMainThread()) {
  subscribe('worker_threads', (message) => {
    const worker = (message as { worker: Worker }).worker;
    const id = worker.threadId;
    liveWorkers.set(id, worker);
    worker.once('exit', () => liveWorkers.delete(id));
  });
}
