import { readlinkSync } from 'node:fs';

/**
 * Whether this is the process's main thread. On Linux the main thread's id is the process id, which
 * `/proc/thread-self` names: no need to load worker_threads (~70 KB of heap an idle process would keep,
 * see diagnostics-server.ts). Anywhere else, or if /proc says otherwise, worker_threads decides (in a
 * worker it is loaded already).
 */
export async function isMainThread(): Promise<boolean> {
  try {
    if (readlinkSync('/proc/thread-self') === `${process.pid}/task/${process.pid}`) return true;
  } catch {
    // No /proc: ask worker_threads.
  }
  return (await import('node:worker_threads')).isMainThread;
}
