import { createRequire } from 'node:module';

/**
 * Node's builtins without importing them as ES modules: that reads every one of a module's exports,
 * and the lazy ones of node:fs and node:util load node:stream, the MIME parser and parseArgs, which
 * nothing that `import 'tracepipe'` runs uses. The process hands them out where Node can (20.16 and
 * later); elsewhere require() does.
 */
export const requireBuiltin: (id: string) => unknown = process.getBuiltinModule ?? createRequire(import.meta.url);

/**
 * node:worker_threads, which a worker thread has loaded before its own code runs; on the main thread
 * loading it loads node:stream and the worker machinery (~35 of Node's modules) as well.
 */
export function workerThreads(): typeof import('node:worker_threads') {
  return requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');
}

let main: boolean | undefined;

/**
 * Whether this is the process's main thread, known without worker_threads where /proc says it: on
 * Linux the main thread's id is the process id, which `/proc/thread-self` names. Anywhere else, or if
 * /proc says otherwise, worker_threads decides (in a worker it is loaded already).
 */
export function isMainThread(): boolean {
  if (main === undefined) {
    try {
      const { readlinkSync } = requireBuiltin('node:fs') as typeof import('node:fs');
      main = readlinkSync('/proc/thread-self') === `${process.pid}/task/${process.pid}` || undefined;
    } catch {
      // No /proc: ask worker_threads.
    }
    main ??= workerThreads().isMainThread;
  }
  return main;
}

/** This thread's id as worker_threads numbers it: 0 on the main thread. */
export function threadId(): number {
  return isMainThread() ? 0 : workerThreads().threadId;
}
