import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const PROCESSES = 5;
const GCS = 300;
const TURNS = 25;

export const description = 'issue 16: what Runtime.GC runs inside each GC pause, with the GC hook and with perf_hooks alone';

export async function run() {
  console.log(`${PROCESSES} processes (--single-threaded-gc, steadier pauses); in each, ${TURNS} turns of off / perf_hooks observer / GC hook + observer, order rotating, ${GCS} back-to-back scavenges (gc({ type: 'minor' })) each; per process the median turn`);
  const runs = [];
  for (let p = 0; p < PROCESSES; p++) runs.push(await runVariant(VARIANT, [String(GCS), String(TURNS)], { nodeArgs: ['--expose-gc', '--single-threaded-gc'] }));
  const checks = [];
  for (const [what, key] of [['wall', 'wallUs'], ['main thread on-CPU', 'cpuUs']]) {
    if (runs.some((r) => r.off[key] === undefined)) continue;
    row(`off, ${what}`, `${formatSummary(summarize(runs.map((r) => r.off[key])), 2)} µs per scavenge`);
    // hook - perf-hooks is the GC hook's own callbacks: the hook route keeps the observer as its doorbell.
    for (const [mode, base] of [['perf-hooks', 'off'], ['hook', 'off'], ['hook', 'perf-hooks']]) {
      const added = summarize(runs.map((r) => r[mode][key] - r[base][key]));
      row(`${mode} - ${base}, ${what}`, `${formatSummary(added, 2)} µs per scavenge`);
      checks.push({ check: `inside each GC pause, ${mode} - ${base}, ${what}`, value: `${added.median.toFixed(2)} µs`, target: null, met: null });
    }
  }
  return checks;
}
