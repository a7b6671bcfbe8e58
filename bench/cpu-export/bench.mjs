// The CPU-sample views on a long profile: 2,000,000 samples (two threads sampled at 1 ms for about
// 17 minutes, 5,000 distinct stacks each, definitions written again every 5 s as the sampler does)
// converted to speedscope (which holds the samples until the end) and to Perfetto (which streams
// them), with jsonl, a format that holds nothing, on the same trace for scale. Each run is the CLI in
// its own process; wall time, CPU time and peak RSS are its own (process.resourceUsage).
// TRACEPIPE_BENCH_BASELINE=/path/to/other/dist runs the same commands with that build, once each.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSummary, summarize } from '../support/stats.mjs';
import { writeSampleTrace } from '../support/synthetic-traces.mjs';
import { runVariant } from '../support/variant-process.mjs';

const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const CLI_RUN = fileURLToPath(new URL('../export-scale/cli-run.mjs', import.meta.url));
const ROUNDS = 3;
const TIMEOUT_S = 600;
const SAMPLES_PER_THREAD = 1_000_000;
const THREADS = 2;

export const description = 'issue 22: convert --to speedscope and --to perfetto on 2,000,000 CPU samples: time, peak RSS, output size';

export async function run() {
  const baseline = process.env.TRACEPIPE_BENCH_BASELINE;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-cpu-export-'));
  try {
    const trace = join(dir, 'samples.tptrace');
    const { events } = writeSampleTrace(trace, { samples: SAMPLES_PER_THREAD, threads: THREADS });
    console.log(`  ${(SAMPLES_PER_THREAD * THREADS).toLocaleString('en-US')} samples on ${THREADS} threads, ${events.toLocaleString('en-US')} events, ${(statSync(trace).size / 1e6).toFixed(1)} MB`);
    const checks = [];
    console.log(`  ${'command'.padEnd(30)} ${'wall s'.padStart(22)} ${'CPU s'.padStart(7)} ${'peak RSS'.padStart(9)} ${'output'.padStart(9)}${baseline ? '   baseline: exit, wall s, CPU s, peak RSS' : ''}`);
    for (const format of ['speedscope', 'perfetto', 'jsonl']) {
      const out = join(dir, `out.${format}`);
      const measure = async (dist) => {
        const r = await runVariant(CLI_RUN, [dist, String(TIMEOUT_S), '-', 'convert', trace, '--to', format, '-o', out], { timeoutMs: (TIMEOUT_S + 60) * 1000 });
        const bytes = r.code === 0 ? statSync(out).size : NaN;
        rmSync(out, { force: true });
        return { ...r, bytes };
      };
      const runs = [];
      for (let i = 0; i < ROUNDS; i++) runs.push(await measure(DIST));
      const failed = runs.find((x) => x.code !== 0);
      const wall = summarize(runs.map((x) => x.wallMs / 1000));
      const cpu = summarize(runs.map((x) => x.cpuMs / 1000)).median;
      const rss = Math.max(...runs.map((x) => x.maxRssMB));
      const size = `${(runs[0].bytes / 1e6).toFixed(0)} MB`;
      let line = `  ${`convert --to ${format}`.padEnd(30)} ${formatSummary(wall, 1).padStart(22)} ${cpu.toFixed(1).padStart(7)} ${`${rss.toFixed(0)} MB`.padStart(9)} ${size.padStart(9)}`;
      let before = '';
      if (baseline) {
        const b = await measure(baseline);
        before = `exit ${b.code}, ${(b.wallMs / 1000).toFixed(1)} s, ${(b.cpuMs / 1000).toFixed(1)} s CPU, ${Number.isFinite(b.maxRssMB) ? `${b.maxRssMB.toFixed(0)} MB` : 'RSS not reported'}${b.error ? ` (${b.error})` : ''}`;
        line += `   ${before}`;
      }
      console.log(line);
      checks.push({ check: `convert --to ${format}, 2,000,000 CPU samples`, value: failed ? `failed: exit ${failed.code} ${failed.error}` : `${wall.median.toFixed(1)} s, ${cpu.toFixed(1)} s CPU, peak RSS ${rss.toFixed(0)} MB, ${size}${before ? `; before: ${before}` : ''}`, target: 'exit 0', met: !failed });
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
