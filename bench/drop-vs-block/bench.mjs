import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const PRODUCER = fileURLToPath(new URL('./producer.mjs', import.meta.url));
const ROUNDS = 7;
const TOTAL = 1_000_000;
const MIN_RATIO = 0.7;

export const description = "issue 3: the seed's differential, 1,000,000 events into a 1 MB buffer, Drop vs Block (main thread; then main + 4 workers)";

function dropRunOk(r) {
  const n = r.resultDropped;
  return n > 0 && r.readerDropped === n && r.readerEvents === r.attempted - n && r.complete && r.status === 'stopped';
}

function blockRunOk(r) {
  return r.readerEvents === r.attempted && r.readerDropped === 0 && r.resultDropped === 0 && r.complete && r.status === 'stopped';
}

async function scenario(workers) {
  const who = workers === 0 ? 'main thread only' : `main thread + ${workers} workers, ${TOTAL / (workers + 1)} events each, started together`;
  console.log(`${who}: ${ROUNDS} rounds x {drop, block}, each run in its own process`);
  const res = await interleavedRounds(ROUNDS, ['drop', 'block'], (mode) => runVariant(PRODUCER, [mode, String(TOTAL), String(workers)]));
  const rate = (r) => r.attempted / r.produceMs / 1e3;
  const s = (runs, f, d) => formatSummary(summarize(runs.map(f)), d);
  const ratio = summarize(res.block.map((b, k) => rate(b) / rate(res.drop[k])));
  row('drop: producer throughput', `${s(res.drop, rate, 2)} M events/s`);
  row('drop: N dropped', s(res.drop, (r) => r.resultDropped, 0));
  row('drop: reader counts / reports dropped', res.drop.map((r) => `${r.readerEvents}+${r.readerDropped}`).join(', '));
  row('block: producer throughput', `${s(res.block, rate, 2)} M events/s`);
  row('block: reader counts / reports dropped', res.block.map((r) => `${r.readerEvents}+${r.readerDropped}`).join(', '));
  row('block: stop() after the last write', `${s(res.block, (r) => r.stopMs, 0)} ms`);
  row('block / drop throughput', `${formatSummary(ratio, 2)} x (per round)`);
  const dropOk = res.drop.every(dropRunOk);
  const blockOk = res.block.every(blockRunOk);
  row('drop: N > 0, reader == 1,000,000 - N, reports N', dropOk ? 'yes, in every run' : 'NO');
  row('block: reader == 1,000,000, 0 dropped', blockOk ? 'yes, in every run' : 'NO');
  console.log(`  target: block >= ${MIN_RATIO}x drop -> ${ratio.median >= MIN_RATIO ? 'MET' : 'MISSED'}`);
  const label = workers === 0 ? 'main thread' : `main + ${workers} workers`;
  return [
    { check: `drop vs block (${label}): block/drop throughput`, value: `${ratio.median.toFixed(2)}x`, target: `>= ${MIN_RATIO}x`, met: ratio.median >= MIN_RATIO },
    { check: `drop vs block (${label}): exact counts`, value: dropOk && blockOk ? 'exact' : 'wrong', target: 'drop: 1M - N read, N reported; block: 1M read', met: dropOk && blockOk },
  ];
}

export async function run() {
  return [...(await scenario(0)), ...(await scenario(4))];
}
