/**
 * The narrow, versioned interface between this thread's host (the copy of tracepipe that runs its
 * sessions) and the providers defined elsewhere: by tracepipe/lite, or by another copy of tracepipe
 * in the same process (seed 000: a component that cannot link against the host keeps its own enabled
 * state and fires through a narrow interface). Documented in docs/LITE.md; tracepipe/lite declares
 * the same shapes on its side, as it imports nothing.
 */

/** Where the host is: on globalThis, so every copy in a thread finds the same one. */
export const HOST_KEY = Symbol.for('tracepipe.host');
/** Providers defined before any host loaded; the host adopts them when it does. */
export const WAITING_KEY = Symbol.for('tracepipe.waiting');
/** The interface version this host speaks; it adopts components of every ABI from 1 up to it. */
export const HOST_VERSION = 1;

/** A provider defined outside the host, handed over with the objects its library calls. */
export interface ComponentProvider {
  /** The interface version the component was written for. */
  readonly abi: number;
  readonly name: string;
  /** The second argument of defineProvider, as the library wrote it. */
  readonly definition: unknown;
  /**
   * Member name → the object the library calls. The host keeps each one's `enabled` current and
   * installs its methods: write/writeAt (events), begin/end/run (spans), set/add (counters; the
   * host takes a counter's `value` once, when it adopts it).
   */
  readonly members: Readonly<Record<string, object>>;
  /** The provider object: the host keeps `enablements` current on it. */
  readonly provider: object;
}

export interface ProviderHost {
  readonly version: number;
  /** Adopts a component; false when it cannot (the host has said why on stderr, once). Never throws. */
  register(component: ComponentProvider): boolean;
}

function isProviderHost(v: unknown): v is ProviderHost {
  return typeof v === 'object' && v !== null && typeof (v as ProviderHost).register === 'function' && typeof (v as ProviderHost).version === 'number';
}

const found: unknown = (globalThis as Record<symbol, unknown>)[HOST_KEY];
if (found !== undefined && !isProviderHost(found)) {
  process.stderr.write(`tracepipe: globalThis[Symbol.for('tracepipe.host')] holds something that is not a tracepipe host; this copy of tracepipe runs on its own\n`);
}

/**
 * The host another copy of tracepipe installed in this thread before this copy loaded. When there is
 * one, this copy's providers are components of it and this copy runs no sessions of its own.
 */
export const foreignHost: ProviderHost | undefined = isProviderHost(found) ? found : undefined;

/** Whether this copy may install itself as the host (no one else has, and nothing blocks the key). */
export const mayHost = found === undefined;
