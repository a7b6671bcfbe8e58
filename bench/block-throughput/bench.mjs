import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const SCRIPTS = {
  tracepipe: fileURLToPath(new URL('./tracepipe.mjs', import.meta.url)),
  raw: fileURLToPath(new URL('./raw-ring.mjs', import.meta.url)),
};
const ROUNDS = 7;
const N = 4_000_000;

export const description = 'issue 3: Block mode sustained throughput to a file (1 MB buffer) vs a raw SharedArrayBuffer ring drained by a worker with fs.writeSync';

export async function run() {
  console.log(`${ROUNDS} rounds x {tracepipe block session, raw ring}, ${N.toLocaleString('en-US')} events each, each run in its own process; times run from the first write until the file is closed (fsync included)`);
  const res = await interleavedRounds(ROUNDS, ['tracepipe', 'raw'], (v) => runVariant(SCRIPTS[v], [String(N)]));
  const eps = (r) => r.events / r.wallMs / 1e3;
  const mbps = (r) => r.fileBytes / 1e3 / r.wallMs;
  const producer = (r) => r.events / r.produceMs / 1e3;
  const s = (runs, f, d) => formatSummary(summarize(runs.map(f)), d);
  const ratio = summarize(res.tracepipe.map((t, k) => eps(t) / eps(res.raw[k])));
  const producerRatio = summarize(res.tracepipe.map((t, k) => producer(t) / producer(res.raw[k])));
  row('tracepipe block: events/s to the file', `${s(res.tracepipe, eps, 2)} M/s`);
  row('tracepipe block: MB/s of file', `${s(res.tracepipe, mbps, 1)} MB/s (${(res.tracepipe[0].fileBytes / N).toFixed(2)} bytes/event)`);
  row('tracepipe block: producer events/s (writes only)', `${s(res.tracepipe, producer, 2)} M/s`);
  row('raw ring: events/s to the file', `${s(res.raw, eps, 2)} M/s`);
  row('raw ring: MB/s of file', `${s(res.raw, mbps, 1)} MB/s (${res.raw[0].recordBytes} bytes/record, as in memory)`);
  row('raw ring: producer events/s (writes only)', `${s(res.raw, producer, 2)} M/s`);
  row('raw ring: producer waits for space', s(res.raw, (r) => r.producerWaits, 0));
  row('tracepipe / raw ring, events/s to the file', `${formatSummary(ratio, 2)} x (per round)`);
  row('tracepipe / raw ring, producer events/s', `${formatSummary(producerRatio, 2)} x (per round)`);
  row('nothing lost', 'every run checked: all events in the file, 0 dropped');
  return [{ check: 'block sustained vs raw ring (events/s)', value: `${ratio.median.toFixed(2)}x`, target: '', met: null }];
}
