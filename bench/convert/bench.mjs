import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { runVariant } from '../support/variant-process.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../ten-million/producer.mjs', import.meta.url));
const CONVERT = fileURLToPath(new URL('./convert-one.mjs', import.meta.url));
const N = 10_000_000;
const TARGET = 2_000_000;
/** Rounds per format: the three with a target get more; `read` is the reader alone, the floor. */
const ALL_ROUNDS = { read: 3, perfetto: 3, chrome: 3, ctf: 3, jsonl: 1, csv: 1, parquet: 1 };
/** BENCH_CONVERT_FORMATS=read,chrome runs only those (comma-separated); BENCH_CONVERT_ROUNDS=N gives each N rounds. */
const ROUNDS = Object.fromEntries(
  Object.entries(ALL_ROUNDS)
    .filter(([f]) => !process.env.BENCH_CONVERT_FORMATS || process.env.BENCH_CONVERT_FORMATS.split(',').includes(f))
    .map(([f, n]) => [f, Number(process.env.BENCH_CONVERT_ROUNDS) || n]),
);

export const description = 'issue 10: tracepipe convert throughput per format on the 10,000,000-event trace, and what each package weighs installed';

/** Bytes of a directory tree (files only). */
function treeBytes(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + treeBytes(join(path, f)), 0);
}

/** Installed size: the package's own files (as npm packs them) plus its production dependencies. */
function installedSizes() {
  const packed = (args) => JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0].unpackedSize;
  const deps = execFileSync('npm', ['ls', '--workspace', '@tracepipe/analyze', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    .split('\n')
    .filter((p) => p.includes('node_modules') && !p.endsWith('@tracepipe/analyze'));
  return { tracepipe: packed([]), analyze: packed(['--workspace', '@tracepipe/analyze']), analyzeDeps: deps.reduce((n, p) => n + treeBytes(p), 0), deps: deps.map((p) => p.slice(p.lastIndexOf('node_modules/') + 13)) };
}

export async function run() {
  const dir = join(ROOT, '.bench-tmp', 'convert');
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'ten-million.tptrace');
  try {
    // Block mode: the producer waits for the drain rather than drop, so the trace holds exactly N events.
    const made = await runVariant(PRODUCER, [String(N), trace, 'block'], { timeoutMs: 300_000 });
    if (made.eventsWritten !== N || made.eventsDropped !== 0) throw new Error(`the trace holds ${made.eventsWritten} events (${made.eventsDropped} dropped), not ${N}`);
    console.log(`the trace: exactly ${N.toLocaleString('en-US')} events (bench/ten-million's producer in block mode, none dropped), ${(made.bytesWritten / 1e6).toFixed(1)} MB`);
    console.log('each conversion in its own process, formats interleaved round by round; output to the same disk, removed after each run');
    const runs = Object.fromEntries(Object.keys(ROUNDS).map((f) => [f, []]));
    const rounds = Math.max(...Object.values(ROUNDS));
    for (let r = 0; r < rounds; r++) {
      for (const format of Object.keys(ROUNDS)) {
        if (r < ROUNDS[format]) runs[format].push(await runVariant(CONVERT, [format, trace, join(dir, `out-${format}`)], { timeoutMs: 900_000 }));
      }
    }
    const checks = [];
    // On a shared machine the wall time includes waiting for a CPU; the converting thread's on-CPU time
    // does not, and is what the wall time would be with a core to itself (the output is written by
    // other threads, in parallel).
    console.log(`  ${'format'.padEnd(9)} ${'M events/s (wall)'.padEnd(27)} ${'per main-thread CPU-s'.padStart(21)} ${'per process CPU-s'.padStart(17)} ${'main waits'.padStart(10)} ${'MB/s in'.padStart(8)} ${'MB/s out'.padStart(9)} ${'MB out'.padStart(7)} ${'peak RSS'.padStart(9)}`);
    for (const [format, list] of Object.entries(runs)) {
      const rate = summarize(list.map((x) => x.events / x.wallMs / 1e3));
      const cpuRate = summarize(list.map((x) => x.events / x.cpuMs / 1e3)).median;
      const mainRate = summarize(list.map((x) => x.events / x.mainOnCpuMs / 1e3)).median;
      const waits = summarize(list.map((x) => x.mainWaitMs / x.wallMs)).median;
      const mbIn = summarize(list.map((x) => x.bytesIn / 1e3 / x.wallMs)).median;
      const mbOut = summarize(list.map((x) => x.bytesOut / 1e3 / x.wallMs)).median;
      const rss = Math.max(...list.map((x) => x.maxRssMB));
      console.log(
        `  ${format.padEnd(9)} ${formatSummary(rate, 2).padEnd(27)} ${mainRate.toFixed(2).padStart(21)} ${cpuRate.toFixed(2).padStart(17)} ${`${(100 * waits).toFixed(0)}%`.padStart(10)} ${mbIn.toFixed(1).padStart(8)} ${mbOut.toFixed(1).padStart(9)} ${(list[0].bytesOut / 1e6).toFixed(0).padStart(7)} ${`${rss.toFixed(0)} MB`.padStart(9)}`,
      );
      if (format === 'read') continue;
      const targeted = ['perfetto', 'chrome', 'ctf'].includes(format);
      checks.push({
        check: `convert --to ${format}: events/s on the 10 M trace`,
        value: `${rate.median.toFixed(2)} M/s wall (main thread waited ${(100 * waits).toFixed(0)}% of it for a CPU); ${mainRate.toFixed(2)} M per main-thread CPU-s; peak RSS ${rss.toFixed(0)} MB`,
        target: targeted ? `>= ${TARGET / 1e6} M/s` : undefined,
        met: targeted ? rate.median * 1e6 >= TARGET : null,
      });
    }
    const size = installedSizes();
    row('installed: tracepipe (npm pack, unpacked)', `${(size.tracepipe / 1e6).toFixed(2)} MB, no dependencies`);
    row('installed: @tracepipe/analyze itself', `${(size.analyze / 1e3).toFixed(0)} kB`);
    row('installed: its dependencies', `${(size.analyzeDeps / 1e6).toFixed(1)} MB (${size.deps.join(', ')})`);
    checks.push({ check: 'installed size: tracepipe / @tracepipe/analyze with dependencies', value: `${(size.tracepipe / 1e6).toFixed(2)} MB / ${((size.analyze + size.analyzeDeps) / 1e6).toFixed(1)} MB`, met: null });
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
