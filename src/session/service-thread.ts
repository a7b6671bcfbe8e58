import { isMainThread, workerThreads } from '../schema/this-thread.js';

/** workerData key marking tracepipe's own helper threads (the stall watchdog). */
export const SERVICE_THREAD_KEY = 'tracepipe:service-thread';

/** True in tracepipe's helper threads: runtime providers that describe "this thread" stay idle there. */
export const isServiceThread = !isMainThread() && isServiceData(workerThreads().workerData);

function isServiceData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>)[SERVICE_THREAD_KEY] === true;
}
