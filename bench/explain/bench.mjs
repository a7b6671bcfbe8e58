import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { writeExplainTrace } from '../support/synthetic-traces.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ONE = fileURLToPath(new URL('./explain-one.mjs', import.meta.url));
const N = 10_000_000;
const ROUNDS = 3;
const RSS_TARGET_MB = 500;
/** Events per second, in millions. */
const RATE_TARGET_M = 1;

export const description = 'issue 23: tracepipe explain on a 10,000,000-event trace with spans, GC pauses, stalls and CPU samples: time, events/s and peak RSS, against its two bare skims and one decoding read';

export async function run() {
  const dir = join(ROOT, '.bench-tmp', 'explain');
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'server.tptrace');
  try {
    const t0 = performance.now();
    const { events } = await writeExplainTrace(trace, { events: N });
    console.log(`the trace: ${events.toLocaleString('en-US')} events (Node.Channels HttpServer and Fetch spans, Runtime.GC, Runtime.EventLoop stalls, Runtime.CpuSampler at 1 ms on two threads), ${(statSync(trace).size / 1e6).toFixed(1)} MB, written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`${ROUNDS} rounds, each variant in its own process, order rotating`);
    const runs = await interleavedRounds(ROUNDS, ['explain', 'skim', 'read'], (v) => runVariant(ONE, [v, trace], { timeoutMs: 600_000 }));
    const seconds = (v) => summarize(runs[v].map((r) => r.wallMs / 1000));
    const rate = summarize(runs.explain.map((r) => r.events / (r.wallMs / 1000) / 1e6));
    const cpuRate = summarize(runs.explain.map((r) => r.events / (r.cpuMs / 1000) / 1e6));
    const rss = Math.max(...runs.explain.map((r) => r.maxRssMB));
    row('explain: seconds', formatSummary(seconds('explain'), 2));
    row('explain: M events/s (wall)', formatSummary(rate, 2));
    row('explain: M events per CPU second', formatSummary(cpuRate, 2));
    row('explain: peak RSS (max over rounds)', `${rss.toFixed(0)} MB`);
    row('explain: items explained', String(runs.explain[0].items));
    row('two bare skims: seconds', formatSummary(seconds('skim'), 2));
    row('one decoding read (batches, stream order): seconds', formatSummary(seconds('read'), 2));
    row('explain / two skims (per round)', `${formatSummary(summarize(runs.explain.map((r, i) => r.wallMs / runs.skim[i].wallMs)), 2)}x`);
    return [
      { check: 'explain, 10 M-event trace: events/s', value: `${rate.median.toFixed(2)} M/s (${seconds('explain').median.toFixed(1)} s)`, target: `>= ${RATE_TARGET_M} M/s`, met: rate.median >= RATE_TARGET_M },
      { check: 'explain, 10 M-event trace: peak RSS', value: `${rss.toFixed(0)} MB`, target: `< ${RSS_TARGET_MB} MB`, met: rss < RSS_TARGET_MB },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
