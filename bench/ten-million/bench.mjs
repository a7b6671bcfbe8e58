import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const PRODUCER = fileURLToPath(new URL('./producer.mjs', import.meta.url));
const ROUNDS = 3;
const N = 10_000_000;
const MAX_HEADER_BYTES = 6;

export const description = 'issue 2: 10,000,000 events of 4 numeric fields to a file (main thread, drop mode, default 64 MB buffer)';

export async function run() {
  console.log(`${ROUNDS} runs, each in its own process; per run: write ${N.toLocaleString('en-US')} events as fast as possible, stop(), decode the file`);
  // The file is drained natively where the addon is built; the worker drain (its fallback, and every
  // other output's drain) runs the same rounds, interleaved.
  const drains = { native: process.env, worker: { ...process.env, TRACEPIPE_NATIVE_DRAIN: '0' } };
  const { native: runs, worker } = await interleavedRounds(ROUNDS, Object.keys(drains), (d) => runVariant(PRODUCER, [String(N)], { timeoutMs: 300_000, env: drains[d] }));
  const s = (f, d) => formatSummary(summarize(runs.map(f)), d);
  const w = (f, d) => formatSummary(summarize(worker.map(f)), d);
  console.log('  the native drain (the default for a file in drop mode), and beside it the worker drain:');
  row('drain: events/s in the file (written / wall), worker drain', `${w((r) => r.eventsWritten / r.wallMs / 1e3, 2)} M/s`);
  row('dropped %, worker drain', `${w((r) => (100 * r.eventsDropped) / r.attempted, 1)} %`);
  row('stop(), worker drain', `${w((r) => r.stopMs, 0)} ms`);
  row('producer: events/s (attempted / write time)', `${s((r) => r.attempted / r.produceMs / 1e3, 2)} M/s`);
  row('producer: ns per write', `${s((r) => (r.produceMs * 1e6) / r.attempted, 1)} ns`);
  row('stop(): time to flush after the last write', `${s((r) => r.stopMs, 0)} ms`);
  row('drain: MB/s (bytesWritten / wall time)', `${s((r) => r.bytesWritten / 1e6 / (r.wallMs / 1e3), 1)} MB/s`);
  row('drain: events/s in the file (written / wall)', `${s((r) => r.eventsWritten / r.wallMs / 1e3, 2)} M/s`);
  row('events written to the file', s((r) => r.eventsWritten, 0));
  row('events dropped (session result)', s((r) => r.eventsDropped, 0));
  row('dropped %', `${s((r) => (100 * r.eventsDropped) / r.attempted, 1)} %`);
  row('file bytes per event (file size / events)', s((r) => r.anatomy.fileBytes / r.anatomy.events, 2));
  row('payload bytes per event', s((r) => r.anatomy.payloadBytes / r.anatomy.events, 2));
  row('average event header (decoded)', `${s((r) => r.anatomy.eventHeaderBytes / r.anatomy.events, 3)} bytes`);
  row('other overhead per event (blocks, metadata, ...)', `${s((r) => (r.anatomy.fileBytes - r.anatomy.eventHeaderBytes - r.anatomy.payloadBytes) / r.anatomy.events, 3)} bytes`);
  const consistent = runs.every((r) => r.eventsWritten + r.eventsDropped === r.attempted && r.anatomy.events === r.eventsWritten && r.anatomy.fileBytes === r.bytesWritten);
  row('written + dropped == attempted, file == result', consistent ? 'yes, in every run' : 'NO');
  const header = summarize(runs.map((r) => r.anatomy.eventHeaderBytes / r.anatomy.events)).median;
  const b = runs[0].anatomy.blocks;
  row('blocks in run 1', Object.entries(b).map(([k, v]) => `${k} ${v.count}`).join(', '));
  console.log(`  target: average event header <= ${MAX_HEADER_BYTES} bytes -> ${header <= MAX_HEADER_BYTES ? 'MET' : 'MISSED'}`);
  return [
    { check: '10M events: average event header', value: `${header.toFixed(2)} bytes`, target: `<= ${MAX_HEADER_BYTES} bytes`, met: header <= MAX_HEADER_BYTES },
    { check: '10M events: counts consistent', value: consistent ? 'yes' : 'no', target: 'written + dropped == attempted', met: consistent },
  ];
}
