import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinning } from '../support/pinning.mjs';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const LOOP = fileURLToPath(new URL('./loop.mjs', import.meta.url));
const REGISTER = new URL('../../dist/register.js', import.meta.url).href;
const PROCESSES = 5;
const GCS = 300;
const TURNS = 25;
const LOOP_ROUNDS = 6;

export const description = 'issues 16 and 14: what Runtime.GC costs inside each GC pause and outside (delivering them to a loop that turns and scavenges), with the GC hook and with perf_hooks';

/**
 * The second part: a loop that turns and scavenges (loop.mjs), in a fresh process per variant and
 * round, pinned to one CPU with its threads where taskset can: turns per second against untraced in
 * the same round. perf_hooks builds an entry and schedules an immediate per pause; the GC hook rings
 * its doorbell at most once per 20 ms.
 */
async function loopCost() {
  const pin = pinning();
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-gc-loop-'));
  const session = (extra) => ({ nodeArgs: [`--import=${REGISTER}`], env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'loop.tptrace'), TRACEPIPE_PROVIDERS: 'Runtime.GC', ...extra } });
  const variants = {
    untraced: { args: [] },
    "perf_hooks' gc observer alone (no tracepipe)": { args: ['observer'] },
    'Runtime.GC without the GC hook (perf_hooks)': { args: [], ...session({ TRACEPIPE_GC_HOOK: '0' }) },
    'Runtime.GC with the GC hook (its doorbell)': { args: [], ...session({}) },
  };
  console.log(`\n  Outside the pauses: ${LOOP_ROUNDS} rounds, a fresh process per variant, order rotating, ${pin.note ? `NOT PINNED (${pin.note})` : 'each pinned to CPU 0 with its threads'}; turns per second of a loop that allocates and yields, vs untraced in the same round`);
  try {
    const results = await interleavedRounds(LOOP_ROUNDS, Object.keys(variants), (name) => {
      const v = variants[name];
      return runVariant(LOOP, v.args, { nodeArgs: v.nodeArgs ?? [], env: v.env ?? process.env, prefix: pin.server ?? [] });
    });
    const base = results.untraced;
    const checks = [];
    row('untraced', `${formatSummary(summarize(base.map((r) => r.turnsPerSecond)), 0)} turns/s`);
    for (const name of Object.keys(variants).slice(1)) {
      const ratio = summarize(results[name].map((r, i) => r.turnsPerSecond / base[i].turnsPerSecond));
      row(name, `${formatSummary(ratio, 3)}× untraced's turns`);
      checks.push({ check: `turns of a scavenging loop vs untraced, ${name}`, value: `${ratio.median.toFixed(3)}×`, target: null, met: null });
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run() {
  console.log(`Inside the pauses: ${PROCESSES} processes (--single-threaded-gc, steadier pauses); in each, ${TURNS} turns of off / perf_hooks observer / GC hook, order rotating, ${GCS} back-to-back scavenges (gc({ type: 'minor' })) each; per process the median turn`);
  const runs = [];
  for (let p = 0; p < PROCESSES; p++) runs.push(await runVariant(VARIANT, [String(GCS), String(TURNS)], { nodeArgs: ['--expose-gc', '--single-threaded-gc'] }));
  const checks = [];
  for (const [what, key] of [['wall', 'wallUs'], ['main thread on-CPU', 'cpuUs']]) {
    if (runs.some((r) => r.off[key] === undefined)) continue;
    row(`off, ${what}`, `${formatSummary(summarize(runs.map((r) => r.off[key])), 2)} µs per scavenge`);
    for (const [mode, base] of [['perf-hooks', 'off'], ['hook', 'off']]) {
      const added = summarize(runs.map((r) => r[mode][key] - r[base][key]));
      row(`${mode} - ${base}, ${what}`, `${formatSummary(added, 2)} µs per scavenge`);
      checks.push({ check: `inside each GC pause, ${mode} - ${base}, ${what}`, value: `${added.median.toFixed(2)} µs`, target: null, met: null });
    }
  }
  checks.push(...(await loopCost()));
  return checks;
}
