import { randomBytes } from 'node:crypto';

let seed: string | undefined;

/**
 * This process's id seed, written in every session's header: OTLP's trace and span ids are derived
 * from it and the trace's span ids (otlp/otlp-ids.ts), so they are unique across processes and
 * the same in every session of the process, in the file and on the wire.
 */
export function processIdSeed(): string {
  return (seed ??= randomBytes(8).toString('hex'));
}
