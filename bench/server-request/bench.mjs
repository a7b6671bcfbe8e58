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
/** Node.Channels as a user enables it (span context across await), in the cheap mode, and its request event alone. */
const MODES = { default: 'Node.Channels', 'context=sync': 'Node.Channels:0x11:5:context=sync', 'event alone': 'Node.Channels:0x1' };

export const description = "issue 29: Node.Channels' cost per http server request (start + response finish messages) in each mode; TRACEPIPE_BENCH_BEFORE=<built checkout> measures that build beside this one";

export async function run() {
  const dists = { current: DIST };
  if (process.env.TRACEPIPE_BENCH_BEFORE) dists.before = resolve(process.env.TRACEPIPE_BENCH_BEFORE, 'dist');
  const cells = Object.keys(dists).flatMap((build) => Object.keys(MODES).map((mode) => `${build}, ${mode}`));
  const of = (cell) => cell.split(', ');
  console.log(`${ROUNDS} rounds x ${cells.length} cells (build, mode), each in its own process: ${BATCHES} timed batches of ${ITERS} requests after 2 warm-up batches`);
  const res = await interleavedRounds(ROUNDS, cells, (c) => runVariant(VARIANT, [dists[of(c)[0]], MODES[of(c)[1]], String(ITERS), String(BATCHES)]));
  for (const c of cells) row(`${c}: ns per request, wall; on-CPU`, `${formatSummary(summarize(res[c].map((r) => r.nsPerOp)))}; ${formatSummary(summarize(res[c].map((r) => r.cpuNsPerOp ?? NaN)))}`);
  const dropped = cells.flatMap((c) => res[c]).reduce((k, r) => k + r.eventsDropped, 0);
  const checks = [{ check: 'server request: events dropped', value: String(dropped), target: '0', met: dropped === 0 }];
  if (res[`before, default`]) {
    for (const mode of Object.keys(MODES)) {
      const now = res[`current, ${mode}`];
      const before = res[`before, ${mode}`];
      const ratio = summarize(now.map((r, k) => (r.cpuNsPerOp ?? r.nsPerOp) / (before[k].cpuNsPerOp ?? before[k].nsPerOp)));
      row(`${mode}: current / before, per round (on-CPU)`, formatSummary(ratio, 3));
      checks.push({ check: `server request, ${mode}: current / before (on-CPU)`, value: ratio.median.toFixed(3), target: '', met: null });
    }
  }
  return checks;
}
