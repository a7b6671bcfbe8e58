/**
 * The one seam between what `import 'tracepipe'` loads and what loads on first use.
 *
 * Importing tracepipe loads its public entry (src/index.ts): the schema, the built-in providers'
 * definitions, the thread's host and the API's front ends. Everything else (sessions, buffers, the
 * drain, the diagnostics server and client, the trace reader, the flight recorder) is reached through
 * the functions below, each a dynamic import() made once, when first needed; a built-in provider's
 * machinery (what it does when enabled) loads when a session first enables it, from the module its
 * definition names (ProviderImpl.loadMachinery): a program that imports tracepipe and never traces pays for none of it, and an
 * attachable process (`--import tracepipe/register`) loads the session machinery only when a client
 * first asks for a session. Loading it grows the heap by ~2 MB, and a start that grows the old
 * generation by a megabyte or more earns a one-off V8 memory-reducer collection seconds later.
 *
 * Nothing here imports the public entry: the entry and the diagnostics server both come here.
 */
import { canRequireModules, trackImport } from './schema/this-thread.js';

/** Sessions and what they need to run: the session layer; each built-in provider's machinery loads when a session first enables it. */
export interface SessionMachinery {
  readonly session: typeof import('./session/session.js');
  readonly providerSpec: typeof import('./session/provider-spec.js');
}

let loading: Promise<SessionMachinery> | undefined;
let loaded: SessionMachinery | undefined;

/**
 * What the sessions need loaded first, in order: the thread's host and the built-in providers'
 * definitions (so that a session started from here, as the diagnostics server's first request is,
 * sees the same providers as one started after `import 'tracepipe'`); the promise state reader, with
 * which the API's spans of any provider end when their promise settles (a span writes only while a
 * session runs); and the list of live workers Runtime.Process's rundown names, kept from here on.
 */
const BEFORE_SESSIONS = ['./api/tracepipe-host.js', './providers/runtime-providers.js', './providers/promise-state.js', './providers/live-workers.js'];

/**
 * The native drain (src/sinks/native-drain.ts), offered to the sessions it serves. Where Node can
 * require() ES modules it loads with the first session it may serve, once that session's thread can
 * write (its files would otherwise delay the first event by ~4 ms); elsewhere with the machinery.
 */
async function offerNativeDrain(sync: boolean): Promise<void> {
  type DrainThread = typeof import('./session/drain-thread.js');
  type NativeDrain = typeof import('./sinks/native-drain.js');
  const require = canRequireModules() ? process.getBuiltinModule('node:module').createRequire(import.meta.url) : undefined;
  const drainThread = (sync ? require!('./session/drain-thread.js') : await trackImport(import('./session/drain-thread.js'))) as DrainThread;
  if (require) return drainThread.offerNativeDrain(() => (canRequireModules() ? (require('./sinks/native-drain.js') as NativeDrain).startNativeDrain : undefined));
  const { startNativeDrain } = await trackImport(import('./sinks/native-drain.js'));
  drainThread.offerNativeDrain(() => startNativeDrain);
}

/** Loads the session machinery (once). */
export function loadSessionMachinery(): Promise<SessionMachinery> {
  loading ??= (async () => {
    for (const m of BEFORE_SESSIONS) await trackImport(import(m));
    const [session, providerSpec] = await Promise.all([trackImport(import('./session/session.js')), trackImport(import('./session/provider-spec.js'))]);
    await offerNativeDrain(false);
    loaded = { session, providerSpec };
    return loaded;
  })();
  return loading;
}

/**
 * Loads it now, synchronously, where Node can require() ES modules (20.19 and later): a worker thread
 * started while a session runs records from its first event, as it did when sessions loaded with
 * the import. Returns the machinery, or undefined where Node cannot (loadSessionMachinery() then
 * does it a moment later).
 */
export function loadSessionMachineryNow(): SessionMachinery | undefined {
  if (loaded) return loaded;
  if (loading || !canRequireModules()) return undefined;
  // Through the process rather than an import of node:module, which would load with `import 'tracepipe'`.
  const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);
  for (const m of BEFORE_SESSIONS) require(m);
  loaded = { session: require('./session/session.js') as SessionMachinery['session'], providerSpec: require('./session/provider-spec.js') as SessionMachinery['providerSpec'] };
  void offerNativeDrain(true);
  loading = Promise.resolve(loaded);
  return loaded;
}

/** The machinery if it has loaded; until then this thread has no session (sessions start through it). */
export function sessionMachineryIfLoaded(): SessionMachinery | undefined {
  return loaded;
}

/** The machinery if loading it has begun, undefined otherwise: asking which sessions run then loads nothing. */
export function loadedSessionMachinery(): Promise<SessionMachinery> | undefined {
  return loading;
}

export const loadDiagnosticsServer = (): Promise<typeof import('./ipc/diagnostics-server.js')> => trackImport(import('./ipc/diagnostics-server.js'));
export const loadDiagnosticRequests = (): Promise<typeof import('./ipc/diagnostics-requests.js')> => trackImport(import('./ipc/diagnostics-requests.js'));
export const loadDiagnosticsClient = (): Promise<typeof import('./ipc/diagnostics-client.js')> => trackImport(import('./ipc/diagnostics-client.js'));
// Both start sessions: the machinery (the host, the built-in providers' callbacks) first.
export const loadStartupSession = async (): Promise<typeof import('./ipc/startup-session.js')> => (await loadSessionMachinery(), trackImport(import('./ipc/startup-session.js')));
export const loadFlightRecorder = async (): Promise<typeof import('./api/flight-recorder.js')> => (await loadSessionMachinery(), trackImport(import('./api/flight-recorder.js')));
export const loadTraceReader = (): Promise<typeof import('./format/trace-reader.js')> => trackImport(import('./format/trace-reader.js'));
