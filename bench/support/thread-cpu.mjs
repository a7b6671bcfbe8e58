import { readFileSync } from 'node:fs';
import { procStatFields } from './proc-stat.mjs';

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

/**
 * The calling thread's time in user mode and in the kernel so far, in clock ticks (/proc/thread-self/stat,
 * utime and stime: coarse, 10 ms each, so only a long run's ratio means anything), or NaN where not readable.
 */
export function threadTicks() {
  try {
    const f = procStatFields('/proc/thread-self/stat');
    return { userTicks: Number(f[11]), systemTicks: Number(f[12]) };
  } catch {
    return { userTicks: NaN, systemTicks: NaN };
  }
}
