import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * `taskset` prefixes for the measured processes (CPU 0: `server`) and their load or driver (CPU 1:
 * `load`), or why there are none (`note`).
 */
export function pinning() {
  if (availableParallelism() < 2) return { note: `only ${availableParallelism()} CPU` };
  for (const cpu of ['0', '1']) {
    const r = spawnSync('taskset', ['-c', cpu, 'true']);
    if (r.error) return { note: `taskset is not available (${r.error.code ?? r.error.message})` };
    if (r.status !== 0) return { note: `taskset -c ${cpu} failed: ${String(r.stderr).trim()}` };
  }
  return { server: ['taskset', '-c', '0'], load: ['taskset', '-c', '1'] };
}
