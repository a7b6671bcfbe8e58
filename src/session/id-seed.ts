import { requireBuiltin } from '../schema/this-thread.js';

let seed: string | undefined;

/**
 * This process's id seed, written in every session's header: OTLP's trace and span ids are derived
 * from it and the trace's span ids (otlp/otlp-ids.ts), so they are unique across processes and
 * the same in every session of the process, in the file and on the wire.
 */
export function processIdSeed(): string {
  // Not an import of node:crypto: importing it as an ES module reads every export, and its lazy ones
  // load Web Crypto, fs streams and perf_hooks (~35 of Node's modules) before a session's first event.
  return (seed ??= (requireBuiltin('node:crypto') as typeof import('node:crypto')).randomBytes(8).toString('hex'));
}
