import { readFileSync } from 'node:fs';

/**
 * The fields of a /proc stat file (`/proc/<pid>/stat`, `/proc/thread-self/stat`…) after the command
 * name, which is in parentheses and may hold any character, ')' and spaces included: [0] is field 3
 * (the state), [11] and [12] utime and stime, [13] and [14] cutime and cstime, in clock ticks.
 */
export function procStatFields(path) {
  const line = readFileSync(path, 'utf8');
  return line.slice(line.lastIndexOf(')') + 2).split(' ');
}
