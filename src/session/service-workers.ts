import type { Worker } from 'node:worker_threads';

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
