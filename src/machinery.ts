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
import { requireNow, trackImport } from './schema/this-thread.js';

/** Sessions and what they need to run (src/session-machinery.ts); each built-in provider's machinery loads when a session first enables it. */
export type SessionMachinery = typeof import('./session-machinery.js');

let loading: Promise<SessionMachinery> | undefined;
let loaded: SessionMachinery | undefined;

/** Loads the session machinery (once). */
export function loadSessionMachinery(): Promise<SessionMachinery> {
  loading ??= trackImport(import('./session-machinery.js')).then(joined);
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
  if (loading) return undefined;
  const required = requireNow(new URL('./session-machinery.js', import.meta.url)) as SessionMachinery | undefined;
  if (!required) return undefined;
  const machinery = joined(required);
  loading = Promise.resolve(machinery);
  return machinery;
}

/** The machinery, just loaded: a worker thread joins the sessions that run. */
function joined(machinery: SessionMachinery): SessionMachinery {
  loaded = machinery;
  machinery.joinRunningSessions();
  return machinery;
}

/**
 * One of tracepipe's own modules (`specifier`, relative to this file): at once where Node can require()
 * it (requireNow); elsewhere through `load`, the import() of the same module.
 */
function loadOwn<T>(specifier: string, load: () => Promise<T>): Promise<T> {
  const required = requireNow(new URL(specifier, import.meta.url)) as T | undefined;
  return required ? Promise.resolve(required) : trackImport(load());
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
// It starts sessions: the machinery (the host, the built-in providers' callbacks) first.
export const loadFlightRecorder = async (): Promise<typeof import('./api/flight-recorder.js')> => (await loadSessionMachinery(), loadOwn('./api/flight-recorder.js', () => import('./api/flight-recorder.js')));
/** The GC hook, which `tracepipe/register` loads first when a session is asked for. */
export const loadGcHook = (): Promise<typeof import('./providers/gc-hook.js')> => loadOwn('./providers/gc-hook.js', () => import('./providers/gc-hook.js'));
export const loadTraceReader = (): Promise<typeof import('./format/trace-reader.js')> => trackImport(import('./format/trace-reader.js'));
