/**
 * What sessions need, as the one module src/machinery.ts loads on their first use (a bundle of its
 * own once built: BENCHMARKS.md §38). In order: the thread's host and the built-in providers'
 * definitions (so that a session started from here, as the diagnostics server's first request is,
 * sees the same providers as one started after `import 'tracepipe'`); the promise state reader, with
 * which the API's spans of any provider end when their promise settles (a span writes only while a
 * session runs); the list of live workers Runtime.Process's rundown names, kept from here on; then
 * the sessions, and the native drain offered to them (the sinks layer's: it opens the session's
 * file, which the session layer cannot); the startup session.
 */
import './api/tracepipe-host.js';
import './providers/runtime-providers.js';
import './providers/promise-state.js';
import './providers/live-workers.js';
import { offerNativeDrain } from './session/drain-thread.js';
export { discardWarmDrainThread, warmDrainThread } from './session/drain-thread.js';
import { startNativeDrain } from './sinks/native-drain.js';
export { startStartupSession, startupDrainIsWorker } from './ipc/startup-session.js';

export { joinRunningSessions } from './session/control-channel.js';
export * as session from './session/session.js';
export * as providerSpec from './session/provider-spec.js';

offerNativeDrain(() => startNativeDrain);
