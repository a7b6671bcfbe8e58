import type { ProviderConfig } from './provider-spec.js';

/** What every thread needs to know to write into a session (it crosses threads by structured clone). */
export interface SessionDescriptor {
  readonly id: number;
  readonly sab: SharedArrayBuffer;
  readonly providers: readonly ProviderConfig[];
  /** Trace origin on the process monotonic clock (ns, decimal string). */
  readonly originNs: string;
  /** Whether providers' onDisable events (rundown) still reach the session as it closes. */
  readonly rundown: boolean;
}
