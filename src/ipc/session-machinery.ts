/**
 * The session machinery (sessions, buffers, the drain, the providers, the thread's host) as the
 * diagnostics server uses it: loaded on the first request that needs a session, never at
 * `--import`. Loading it grows the heap by ~2 MB, and a start that grows the old generation by a
 * megabyte or more earns a one-off V8 memory-reducer collection seconds later (~20-30 ms of CPU):
 * an attachable process that is never traced loads only the server.
 */
import { HOST_KEY } from '../schema/provider-host.js';

/** What the server needs of it. */
export interface SessionMachinery {
  readonly session: typeof import('../session/session.js');
  readonly providerSpec: typeof import('../session/provider-spec.js');
}

let loading: Promise<SessionMachinery> | undefined;

/** Loads it (once). The public entry comes first: it defines the built-in providers and installs the thread's host. */
export function loadSessionMachinery(): Promise<SessionMachinery> {
  loading ??= import('../index.js').then(async () => ({ session: await import('../session/session.js'), providerSpec: await import('../session/provider-spec.js') }));
  return loading;
}

/**
 * The machinery if some copy of tracepipe has loaded its sessions in this thread (it installs a host
 * on globalThis, or finds the key taken), undefined otherwise: then no session can exist yet, and
 * asking which are running loads nothing.
 */
export async function loadedSessionMachinery(): Promise<SessionMachinery | undefined> {
  return loading || HOST_KEY in globalThis ? loadSessionMachinery() : undefined;
}
