import { mkdirSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
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

export const description = 'issue 23: tracepipe explain on a 10,000,000-event trace with spans, GC pauses, stalls and CPU samples: time, events per CPU second and of wall time, and peak RSS, against its floor (two bare skims) and one decoding read';

export async function run() {
  const dir = join(ROOT, '.bench-tmp', 'explain');
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'server.tptrace');
  try {
    const t0 = performance.now();
    const { events } = await writeExplainTrace(trace, { events: N });
    console.log(`the trace: ${events.toLocaleString('en-US')} events (Node.Channels HttpServer and Fetch spans, Runtime.GC, Runtime.EventLoop stalls, Runtime.CpuSampler at 1 ms on two threads), ${(statSync(trace).size / 1e6).toFixed(1)} MB, written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`${ROUNDS} rounds, each variant in its own process, order rotating`);
    const loadBefore = loadavg();
    const runs = await interleavedRounds(ROUNDS, ['explain', 'skim', 'read'], (v) => runVariant(ONE, [v, trace], { timeoutMs: 600_000 }));
    const seconds = (v) => summarize(runs[v].map((r) => r.wallMs / 1000));
    // Events of the trace per second: of wall time, and of the process's CPU time (the machine may
    // be shared, so the CPU figure is the one to hold against the target).
    const rate = (v) => summarize(runs[v].map((r) => r.events / (r.wallMs / 1000) / 1e6));
    const cpuRate = (v) => summarize(runs[v].map((r) => r.events / (r.cpuMs / 1000) / 1e6));
    const rss = Math.max(...runs.explain.map((r) => r.maxRssMB));
    row('explain: seconds', formatSummary(seconds('explain'), 2));
    row('explain: M events/s (wall)', formatSummary(rate('explain'), 2));
    row('explain: M events per CPU second', formatSummary(cpuRate('explain'), 2));
    row('explain: peak RSS (max over rounds)', `${rss.toFixed(0)} MB`);
    row('explain: items explained', String(runs.explain[0].items));
    row('floor, two bare skims: seconds', formatSummary(seconds('skim'), 2));
    row('floor, two bare skims: M events/s (wall)', formatSummary(rate('skim'), 2));
    row('floor, two bare skims: M events per CPU second', formatSummary(cpuRate('skim'), 2));
    row('one decoding read (batches, stream order): seconds', formatSummary(seconds('read'), 2));
    row('explain / two skims, CPU (per round)', `${formatSummary(summarize(runs.explain.map((r, i) => r.cpuMs / runs.skim[i].cpuMs)), 2)}x`);
    const load = (l) => l.map((x) => x.toFixed(1)).join(', ');
    row('load average (1, 5, 15 min): before, after', `${load(loadBefore)}; ${load(loadavg())}`);
    const explainRate = cpuRate('explain');
    return [
      { check: 'explain, 10 M-event trace: events per CPU second', value: `${explainRate.median.toFixed(2)} M/s (${rate('explain').median.toFixed(2)} M/s of wall time, ${seconds('explain').median.toFixed(1)} s)`, target: `>= ${RATE_TARGET_M} M/s`, met: explainRate.median >= RATE_TARGET_M },
      { check: 'explain, 10 M-event trace: peak RSS', value: `${rss.toFixed(0)} MB`, target: `< ${RSS_TARGET_MB} MB`, met: rss < RSS_TARGET_MB },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
