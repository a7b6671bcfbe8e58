import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const ROUNDS = 7;
const ITERS = 50_000_000;
const BATCHES = 7;
const TARGET_NS = 2;

export const description = 'issue 2: `if (E.enabled) E.write(1.5, 2.5, 3, -4)` with no session vs an empty loop';

export async function run() {
  console.log(`${ROUNDS} rounds x 2 variants, each in its own process: ${BATCHES} batches of ${ITERS / 1e6}M iterations after warm-up; per process the median batch`);
  const res = await interleavedRounds(ROUNDS, ['empty', 'disabled'], (v) => runVariant(VARIANT, [v, String(ITERS), String(BATCHES)]));
  const empty = summarize(res.empty.map((r) => r.nsPerOp));
  const disabled = summarize(res.disabled.map((r) => r.nsPerOp));
  const diffs = summarize(res.disabled.map((r, k) => r.nsPerOp - res.empty[k].nsPerOp));
  const diff = disabled.median - empty.median;
  row('empty loop', `${formatSummary(empty, 2)} ns/op`);
  row('loop + disabled event', `${formatSummary(disabled, 2)} ns/op`);
  row('difference of the medians', `${diff.toFixed(2)} ns/op`);
  row('difference per round', `${formatSummary(diffs, 2)} ns/op`);
  console.log(`  target: within ${TARGET_NS} ns/op -> ${Math.abs(diff) <= TARGET_NS ? 'MET' : 'MISSED'}`);
  return [{ check: 'disabled event minus empty loop', value: `${diff.toFixed(2)} ns/op`, target: `<= ${TARGET_NS} ns/op`, met: Math.abs(diff) <= TARGET_NS }];
}
