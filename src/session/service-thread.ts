import { requireBuiltin } from '../schema/this-thread.js';
const { isMainThread, workerData } = requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');

/** workerData key marking tracepipe's own helper threads (the stall watchdog). */
export const SERVICE_THREAD_KEY = 'tracepipe:service-thread';

/** True in tracepipe's helper threads: runtime providers that describe "this thread" stay idle there. */
export const isServiceThread =
  !isMainThread && typeof workerData === 'object' && workerData !== null && (workerData as Record<string, unknown>)[SERVICE_THREAD_KEY] === true;
