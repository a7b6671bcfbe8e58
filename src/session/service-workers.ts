import type { Worker } from 'node:worker_threads';

/**
 * The stdio options every thread tracepipe starts in a traced process is made with: its output is its
 * own (the thread writes it to the process's descriptors, src/workers/direct-stdio.ts), so Node does
 * not pipe it into this thread's process.stdout and process.stderr, which would create them and, for a
 * pipe, set O_NONBLOCK on a descriptor the application never touched.
 */
export const SERVICE_STDIO = { stdout: true, stderr: true } as const;

/** What one of tracepipe's own threads does. */
export type ServiceRole = 'tracepipe-drain' | 'tracepipe-watchdog';

// Weak: a registry must not keep an exited worker alive.
const roles = new WeakMap<Worker, ServiceRole>();

/** Marks a worker as tracepipe's own, so a rundown can tell it from the application's. */
export function markServiceWorker(worker: Worker, role: ServiceRole): void {
  roles.set(worker, role);
}

/** The worker's role: tracepipe's own role, or 'worker' for the application's threads. */
export function workerRole(worker: Worker): ServiceRole | 'worker' {
  return roles.get(worker) ?? 'worker';
}
