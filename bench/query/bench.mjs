import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../support/runtime-trace.mjs', import.meta.url));
const ONE = fileURLToPath(new URL('./query-one.mjs', import.meta.url));
const N = 10_000_000;
const ROUNDS = 3;
const MAX_RSS_MB = 1024;

export const description = 'issue 15: tracepipe query on a 10,000,000-event trace: load time into DuckDB (vs the reader alone), typical statements, peak RSS';

export async function run() {
  const dir = join(ROOT, '.bench-tmp', 'query');
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'ten-million.tptrace');
  try {
    const made = await runVariant(PRODUCER, [String(N), trace], { timeoutMs: 300_000 });
    console.log(`the trace: ${N.toLocaleString('en-US')} Bench.App/Tick events and the runtime providers' (${made.eventsWritten.toLocaleString('en-US')} written, ${made.eventsDropped} dropped, ${(made.bytesWritten / 1e6).toFixed(1)} MB; block mode)`);
    console.log(`${ROUNDS} rounds, each variant in its own process, order rotating: load = stream into DuckDB as \`tracepipe query\` does, then 4 statements; read = the reader alone`);
    const runs = await interleavedRounds(ROUNDS, ['load', 'read'], (v) => runVariant(ONE, [v, trace], { timeoutMs: 600_000 }));
    const load = summarize(runs.load.map((r) => r.loadMs / 1000));
    const read = summarize(runs.read.map((r) => r.loadMs / 1000));
    const ratio = summarize(runs.load.map((r, i) => r.loadMs / runs.read[i].loadMs));
    const rss = Math.max(...runs.load.map((r) => r.maxRssMB));
    row('events loaded', runs.load[0].events.toLocaleString('en-US'));
    row('load into DuckDB: seconds', formatSummary(load, 2));
    row('load: M events/s', formatSummary(summarize(runs.load.map((r) => r.events / r.loadMs / 1e3)), 2));
    row('reader alone: seconds', formatSummary(read, 2));
    row('load / reader alone (per round)', `${formatSummary(ratio, 2)}x`);
    for (const name of Object.keys(runs.load[0].queryMs)) row(`statement: ${name}`, `${formatSummary(summarize(runs.load.map((r) => r.queryMs[name])), 0)} ms`);
    row('peak RSS, load and statements (max over rounds)', `${rss.toFixed(0)} MB (reader alone: ${Math.max(...runs.read.map((r) => r.maxRssMB)).toFixed(0)} MB)`);
    return [
      { check: 'query: 10 M-event trace load time', value: `${load.median.toFixed(2)} s (${(runs.load[0].events / load.median / 1e6).toFixed(2)} M events/s; ${ratio.median.toFixed(2)}x the reader alone)`, met: null },
      { check: 'query: peak RSS loading and querying the 10 M-event trace', value: `${rss.toFixed(0)} MB`, target: `< ${MAX_RSS_MB} MB`, met: rss < MAX_RSS_MB },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
