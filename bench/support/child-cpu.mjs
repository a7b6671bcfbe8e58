import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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
    // Fields after the command name (which may hold spaces and parentheses): cutime and cstime are the 14th and 15th.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSec;
  } catch {
    return undefined;
  }
}
