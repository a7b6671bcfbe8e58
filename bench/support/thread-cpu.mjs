import { readFileSync } from 'node:fs';

/**
 * The calling thread's time on a CPU and waiting for one, in ns (Linux schedstat), or undefined
 * where that is not available. On a shared machine the wall time of a loop includes time the thread
 * was runnable but not running; on-CPU time does not, so it separates our cost from the neighbours'.
 */
export function threadCpu() {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runNs: run, waitNs: wait } : undefined;
  } catch {
    return undefined;
  }
}
