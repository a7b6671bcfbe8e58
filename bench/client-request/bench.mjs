import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const ROUNDS = 5;
const BATCHES = 7;
const ITERS = 200_000;

export const description = "issue 21: Node.Channels' cost per http client request (start + response finish messages, event + span); TRACEPIPE_BENCH_BEFORE=<built checkout> measures that build beside this one";

export async function run() {
  const dists = { current: DIST };
  if (process.env.TRACEPIPE_BENCH_BEFORE) dists.before = resolve(process.env.TRACEPIPE_BENCH_BEFORE, 'dist');
  const names = Object.keys(dists);
  console.log(`${ROUNDS} rounds x ${names.length} builds, each in its own process: ${BATCHES} timed batches of ${ITERS} requests after 2 warm-up batches`);
  const res = await interleavedRounds(ROUNDS, names, (n) => runVariant(VARIANT, [dists[n], String(ITERS), String(BATCHES)]));
  for (const n of names) row(`${n}: ns per request, wall; on-CPU`, `${formatSummary(summarize(res[n].map((r) => r.nsPerOp)))}; ${formatSummary(summarize(res[n].map((r) => r.cpuNsPerOp ?? NaN)))}`);
  const dropped = names.flatMap((n) => res[n]).reduce((k, r) => k + r.eventsDropped, 0);
  const checks = [{ check: 'client request: events dropped', value: String(dropped), target: '0', met: dropped === 0 }];
  if (res.before) {
    const diff = summarize(res.current.map((r, k) => (r.cpuNsPerOp ?? r.nsPerOp) - (res.before[k].cpuNsPerOp ?? res.before[k].nsPerOp)));
    row('current - before, per round (on-CPU)', `${formatSummary(diff, 0)} ns`);
    checks.push({ check: 'client request: current - before (on-CPU)', value: `${diff.median.toFixed(0)} ns`, target: '', met: null });
  }
  return checks;
}
