import type { Worker } from 'node:worker_threads';
import { requireBuiltin } from '../schema/this-thread.js';

type StdioName = 'stdout' | 'stderr';

/** A stream that writes to this thread's process.stdout or process.stderr as it is when written to. */
function lateStdio(name: StdioName): import('node:stream').Writable {
  const { Writable } = requireBuiltin('node:stream') as typeof import('node:stream');
  return new Writable({ decodeStrings: false, write: (chunk, encoding, done) => void process[name].write(chunk, encoding, done) });
}

/**
 * Makes one of tracepipe's threads, whose output Node forwards as it does any worker's (`stdout:
 * false`, unref'd threads included), but into streams that reach this thread's process.stdout and
 * process.stderr only when the thread prints. Node pipes a new worker's output into them as it makes
 * the worker, which creates them: for a pipe that sets O_NONBLOCK on a file description the process
 * shares with other processes, which an application that never printed would then find non-blocking
 * (README.md, "Transparency"). The two properties are replaced for the constructor's synchronous run
 * only, and put back as they were.
 */
export function makeServiceWorker(make: () => Worker): Worker {
  const saved = (['stdout', 'stderr'] as const).map((name) => [name, Object.getOwnPropertyDescriptor(process, name)] as const);
  try {
    for (const [name] of saved) Object.defineProperty(process, name, { configurable: true, enumerable: true, value: lateStdio(name) });
  } catch {
    // Made unconfigurable by someone else: the worker is made as Node makes it.
    restore(saved);
    return make();
  }
  try {
    return make();
  } finally {
    restore(saved);
  }
}

function restore(saved: ReadonlyArray<readonly [StdioName, PropertyDescriptor | undefined]>): void {
  for (const [name, d] of saved) {
    if (d) Object.defineProperty(process, name, d);
    else delete (process as Partial<NodeJS.Process>)[name];
  }
}

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
