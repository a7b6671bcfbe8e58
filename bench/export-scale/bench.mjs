// The tools on traces that are small on disk but large in what the tools keep per span, per type or
// per thread: spans that never end (convert's lanes, report's span table), thousands of event types
// (a CSV file or a query table per type), thousands of threads (a CTF stream per thread). Each run is
// the CLI in its own process; wall time, CPU time and peak RSS are its own (process.resourceUsage).
// TRACEPIPE_BENCH_BASELINE=/path/to/other/dist runs the same commands with that build, once each, for
// the before/after figures (a run that takes longer than BASELINE_TIMEOUT_S is killed and said so).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSummary, summarize } from '../support/stats.mjs';
import { writeSpanTrace, writeTypesTrace } from '../support/synthetic-traces.mjs';
import { runVariant } from '../support/variant-process.mjs';

const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const CLI_RUN = fileURLToPath(new URL('./cli-run.mjs', import.meta.url));
const ROUNDS = 3;
const TIMEOUT_S = 600;
const BASELINE_TIMEOUT_S = Number(process.env.TRACEPIPE_BENCH_BASELINE_TIMEOUT_S ?? 300);

export const description = 'issue 21: convert, report, query on never-ended spans, thousands of event types and of threads: time and peak RSS';

export async function run() {
  const baseline = process.env.TRACEPIPE_BENCH_BASELINE;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-export-scale-'));
  try {
    const trace = (name) => join(dir, `${name}.tptrace`);
    const made = {
      'open120k': writeSpanTrace(trace('open120k'), { open: 120_000 }),
      'open1m': writeSpanTrace(trace('open1m'), { open: 1_000_000 }),
      'mix': writeSpanTrace(trace('mix'), { open: 100_000, requests: 200_000 }),
      'types8000': writeTypesTrace(trace('types8000'), { types: 8_000 }),
      'types1500': writeTypesTrace(trace('types1500'), { types: 1_500, perType: 4 }),
      'types1000': writeTypesTrace(trace('types1000'), { types: 1_000 }),
      'threads2000': writeTypesTrace(trace('threads2000'), { types: 1, threads: 2_000, perType: 4_000 }),
    };
    for (const [name, m] of Object.entries(made)) console.log(`  ${name}: ${m.events.toLocaleString('en-US')} events${m.unended !== undefined ? `, ${m.unended.toLocaleString('en-US')} spans never ended` : ''}`);
    const out = (name) => join(dir, `out-${name}`);
    // [label, trace, CLI arguments, open-files limit or '-', rounds if not ROUNDS]
    const cases = [
      ['convert --to perfetto, 120,000 never-ended spans', 'open120k', (o) => ['convert', trace('open120k'), '--to', 'perfetto', '-o', o], '-'],
      ['convert --to chrome, 120,000 never-ended spans', 'open120k', (o) => ['convert', trace('open120k'), '--to', 'chrome', '-o', o], '-'],
      ['convert --to perfetto, 1,000,000 never-ended spans', 'open1m', (o) => ['convert', trace('open1m'), '--to', 'perfetto', '-o', o], '-'],
      ['convert --to perfetto, mix (100,000 never-ended, 200,000 requests)', 'mix', (o) => ['convert', trace('mix'), '--to', 'perfetto', '-o', o], '-'],
      ['convert --to chrome, mix', 'mix', (o) => ['convert', trace('mix'), '--to', 'chrome', '-o', o], '-'],
      ['report, 1,000,000 never-ended spans', 'open1m', () => ['report', trace('open1m')], '-'],
      ['report, mix', 'mix', () => ['report', trace('mix')], '-'],
      ['convert --to csv, 8,000 event types', 'types8000', (o) => ['convert', trace('types8000'), '--to', 'csv', '-o', o], '-'],
      ['convert --to csv, 1,500 event types, ulimit -n 256', 'types1500', (o) => ['convert', trace('types1500'), '--to', 'csv', '-o', o], '256'],
      ['convert --to ctf, 2,000 threads, ulimit -n 256', 'threads2000', (o) => ['convert', trace('threads2000'), '--to', 'ctf', '-o', o], '256'],
      ['query, 1,000 event types', 'types1000', () => ['query', trace('types1000'), 'SELECT count(*) FROM events'], '-'],
      ['query, 8,000 event types', 'types8000', () => ['query', trace('types8000'), 'SELECT count(*) FROM events'], '-', 1],
    ];
    const measure = async (dist, [label, , args, files], k, timeoutS) => {
      const o = out(`${k}`);
      const r = await runVariant(CLI_RUN, [dist, String(timeoutS), files, ...args(o)], { timeoutMs: (timeoutS + 60) * 1000 });
      rmSync(o, { recursive: true, force: true });
      return { label, ...r };
    };
    const checks = [];
    console.log(`  ${'command'.padEnd(70)} ${'wall s'.padStart(22)} ${'CPU s'.padStart(7)} ${'peak RSS'.padStart(9)}${baseline ? '   baseline: exit, wall s, CPU s, peak RSS' : ''}`);
    for (const [k, c] of cases.entries()) {
      const runs = [];
      for (let r = 0; r < (c[4] ?? ROUNDS); r++) runs.push(await measure(DIST, c, k, TIMEOUT_S));
      const failed = runs.find((x) => x.code !== 0);
      const wall = summarize(runs.map((x) => x.wallMs / 1000));
      const cpu = summarize(runs.map((x) => x.cpuMs / 1000)).median;
      const rss = Math.max(...runs.map((x) => x.maxRssMB));
      let line = `  ${c[0].padEnd(70)} ${formatSummary(wall, 1).padStart(22)} ${cpu.toFixed(1).padStart(7)} ${`${rss.toFixed(0)} MB`.padStart(9)}`;
      let before = '';
      if (baseline) {
        const b = await measure(baseline, c, k, BASELINE_TIMEOUT_S);
        before = `exit ${b.code}, ${(b.wallMs / 1000).toFixed(1)} s, ${(b.cpuMs / 1000).toFixed(1)} s CPU, ${Number.isFinite(b.maxRssMB) ? `${b.maxRssMB.toFixed(0)} MB` : 'RSS not reported'}${b.error ? ` (${b.error})` : ''}`;
        line += `   ${before}`;
      }
      console.log(line);
      checks.push({ check: c[0], value: failed ? `failed: exit ${failed.code} ${failed.error}` : `${wall.median.toFixed(1)} s, ${cpu.toFixed(1)} s CPU, peak RSS ${rss.toFixed(0)} MB${before ? `; before: ${before}` : ''}`, target: 'exit 0', met: !failed });
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
