// Runs the benchmarks: `node bench/run.mjs` for all of them, `node bench/run.mjs <name>...` for some,
// `node bench/run.mjs --list` names them.
// `npm run bench` builds first. Every benchmark measures its peers and ideals in the same run and
// prints ratios; absolute times drift between runs on shared machines, ratios much less.
import { existsSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';

const BENCHMARKS = ['disabled-event', 'enabled-event', 'idle-cost', 'ten-million', 'drop-vs-block', 'block-throughput', 'http-overhead', 'collect-latency', 'gc-pause-cost', 'read-throughput', 'spans', 'gcdump', 'convert', 'query', 'report-html', 'ring-dump', 'client-request', 'server-request', 'export-scale', 'cpu-sampler', 'source-maps', 'cpu-export', 'explain', 'ring-capacity', 'counters', 'gcdump-shapes', 'startup', 'otlp', 'http-instructions', 'string-write', 'writer-compilations'];

/** A benchmark is a folder with a bench.mjs, or a single <name>.mjs; either exports `description` and `run()`. */
function entryOf(name) {
  const folder = new URL(`./${name}/bench.mjs`, import.meta.url);
  return existsSync(folder) ? folder : new URL(`./${name}.mjs`, import.meta.url);
}

const asked = process.argv.slice(2);
if (asked.includes('--list')) {
  for (const name of BENCHMARKS) console.log(`${name}: ${(await import(entryOf(name).href)).description}`);
  process.exit(0);
}
const unknown = asked.filter((n) => !BENCHMARKS.includes(n));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from: ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}
if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
  console.error('dist/ is missing: run `npm run build` first (or use `npm run bench`, which builds)');
  process.exit(2);
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
console.log(`tracepipe benchmarks: Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs (${cpu}), ${new Date().toISOString()}, load average ${loadavg()[0].toFixed(2)}`);
const started = performance.now();
const checks = [];
let failed = 0;
for (const name of asked.length > 0 ? asked : BENCHMARKS) {
  const bench = await import(entryOf(name).href);
  console.log(`\n== ${name}: ${bench.description}`);
  const t0 = performance.now();
  try {
    checks.push(...(await bench.run()));
  } catch (e) {
    failed++;
    console.log(`  FAILED: ${e.message}`);
    checks.push({ check: name, value: 'failed', target: 'runs to completion', met: false });
  }
  // Other processes on a small shared machine move absolute times; the load average says how busy it was.
  console.log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg()[0].toFixed(2)})`);
}
console.log(`\n== acceptance (${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
const verdict = (met) => (met === null ? 'info  ' : met ? 'met   ' : 'MISSED');
for (const c of checks) console.log(`  ${verdict(c.met)}  ${c.check}: ${c.value}${c.target ? ` (target ${c.target})` : ''}`);
process.exitCode = failed > 0 ? 1 : 0;
