import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const ROUNDS = 7;
const GCS = 400;
const BATCHES = 7;

export const description = 'issue 16: what Runtime.GC adds inside each GC pause, with the GC hook and with perf_hooks alone';

export async function run() {
  console.log(`${ROUNDS} rounds x 3 variants, each in its own process: ${BATCHES} batches of ${GCS} back-to-back scavenges (gc({ type: 'minor' })) after one warm-up batch; per process the median batch`);
  const variants = ['off', 'hook', 'perf-hooks'];
  const res = await interleavedRounds(ROUNDS, variants, (v) => runVariant(VARIANT, [v, String(GCS), String(BATCHES)], { nodeArgs: ['--expose-gc'] }));
  const checks = [];
  for (const [what, key] of [['wall', 'wallNs'], ['main thread on-CPU', 'cpuNs']]) {
    if (res.off.some((r) => r[key] === undefined)) continue;
    for (const v of variants) row(`${v}, ${what} µs per scavenge`, formatSummary(summarize(res[v].map((r) => r[key] / 1000)), 2));
    for (const v of ['hook', 'perf-hooks']) {
      const added = summarize(res[v].map((r, k) => (r[key] - res.off[k][key]) / 1000));
      row(`${v} - off, ${what}, per round`, `${formatSummary(added, 2)} µs`);
      checks.push({ check: `Runtime.GC inside each pause, ${v}, ${what}`, value: `${added.median.toFixed(2)} µs`, target: null, met: null });
    }
  }
  row('GCPause events written (hook, per process)', String(res.hook[0].pausesWritten));
  return checks;
}
