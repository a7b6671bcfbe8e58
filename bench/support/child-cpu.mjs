import { execFileSync } from 'node:child_process';
import { procStatFields } from './proc-stat.mjs';

/** Clock ticks per second of /proc's times (usually 100: 10 ms). */
let ticksPerSec;

/**
 * The CPU time (ms, user + system) of every child this process has waited for so far, from Linux's
 * cutime and cstime (/proc/self/stat): the difference around one child's run is its whole CPU, spawn
 * to exit, what it did after its last word included (node --cpu-prof writes its profile at exit).
 * Only while no other child ends meanwhile; undefined where /proc is missing.
 */
export function reapedChildrenCpuMs() {
  try {
    ticksPerSec ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    // cutime and cstime are the 14th and 15th fields after the command name.
    const fields = procStatFields('/proc/self/stat');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSec;
  } catch {
    return undefined;
  }
}
