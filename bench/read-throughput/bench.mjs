import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const MAKE = fileURLToPath(new URL('./make-trace.mjs', import.meta.url));
const READER = fileURLToPath(new URL('./reader.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
const ROUNDS = 5;
const PER_THREAD = 500_000;
const WORKERS = 3;

export const description = `reading: ${(PER_THREAD * (WORKERS + 1)).toLocaleString('en-US')} events from 4 threads (a real session file), readTrace, its batches and summary() against the same events as JSONL`;

export async function run() {
  // TRACEPIPE_BENCH_BASELINE=/path/to/other/dist adds that build's readTrace and summary as variants (before/after).
  const baseline = process.env.TRACEPIPE_BENCH_BASELINE;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-read-bench-'));
  try {
    const file = join(dir, 'read.tptrace');
    const jsonl = join(dir, 'read.jsonl');
    const made = await runVariant(MAKE, [file, jsonl, String(PER_THREAD), String(WORKERS)], { timeoutMs: 300_000 });
    console.log(`trace: ${made.events.toLocaleString('en-US')} events (${made.dropped} dropped), ${(made.bytes / 2 ** 20).toFixed(1)} MiB; ${ROUNDS} rounds, each variant in its own process`);
    const variants = ['readTrace', 'batches', 'summary', 'jsonl', ...(baseline ? ['baseline readTrace', 'baseline summary'] : [])];
    const res = await interleavedRounds(ROUNDS, variants, (v) => {
      const [name, dist] = v.startsWith('baseline ') ? [v.slice(9), baseline] : [v, DIST];
      return runVariant(READER, [name, v === 'jsonl' ? jsonl : file, dist], { timeoutMs: 300_000 });
    });
    const rate = (r) => r.events / r.cpuMs / 1e3;
    for (const v of variants) {
      const runs = res[v];
      if (runs.some((r) => r.events !== made.events)) throw new Error(`${v} read ${runs.map((r) => r.events).join(', ')} events, not ${made.events}`);
      row(`${v}: M events/s (per CPU second)`, formatSummary(summarize(runs.map(rate)), 2));
      row(`${v}: peak RSS`, `${formatSummary(summarize(runs.map((r) => r.maxRSSBytes / 2 ** 20)), 0)} MB`);
    }
    const ratio = (a, b) => summarize(res[a].map((r, k) => rate(r) / rate(res[b][k])));
    const vsJsonl = ratio('readTrace', 'jsonl');
    row('readTrace / JSONL throughput', `${formatSummary(vsJsonl, 2)}x`);
    const checks = [{ check: 'reading: readTrace / JSONL.parse throughput', value: `${vsJsonl.median.toFixed(2)}x`, target: null, met: null }];
    if (baseline) {
      for (const v of ['readTrace', 'summary']) {
        const r = ratio(v, `baseline ${v}`);
        row(`${v}: this build / baseline throughput`, `${formatSummary(r, 2)}x`);
        checks.push({ check: `reading: ${v} throughput vs baseline`, value: `${r.median.toFixed(2)}x`, target: '>= 0.95x', met: r.median >= 0.95 });
      }
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
