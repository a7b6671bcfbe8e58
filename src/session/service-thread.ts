import { inServiceThread } from '../schema/this-thread.js';

export { SERVICE_THREAD_KEY } from '../schema/this-thread.js';

/** True in tracepipe's helper threads: runtime providers that describe "this thread" stay idle there. */
export const isServiceThread = inServiceThread();
