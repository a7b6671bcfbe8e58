// What a flight-recorder dump costs the process: a recorder whose ring has wrapped (every chunk full
// of the main thread's and two workers' events) is dumped to a file while the main thread samples its
// RSS every 2 ms and the kernel's peak (VmHWM, reset just before the dump). Each round runs in a fresh
// process. Run alone: `node bench/ring-dump.mjs [sizeMB]` (after `npm run build`; default 256).
// TRACEPIPE_BENCH_BEFORE=<checkout with a built dist/> also measures that build, side by side.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { median } from './support/stats.mjs';
import { interleavedRounds, reportResult, runVariant } from './support/variant-process.mjs';

const SELF = fileURLToPath(import.meta.url);
const ROUNDS = 3;
const SIZE_MB = 256;
const WORKERS = 2;
/** The target of issue 21: a dump grows the process by at most the ring's size plus this. */
const HEADROOM_MB = 16;

export const description = `issue 21: RSS growth and time of a flight-recorder dump of a full ${SIZE_MB} MiB ring (main thread + ${WORKERS} workers), against the ring's size + ${HEADROOM_MB} MiB`;

const MiB = 1024 * 1024;

function vmKiB(field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** The benchmarks' Tick event (support/tick-provider.mjs), defined with the build under test. */
async function tickOf(dist) {
  const { defineProvider } = await import(new URL('index.js', dist).href);
  return defineProvider('Bench.App', { events: { Tick: { id: 1, fields: [['a', 'f64'], ['b', 'f64'], ['c', 'u32'], ['d', 'i32']] } } }).Tick;
}

function writeTicks(tick, count) {
  for (let i = 0; i < count; i++) tick.write(i, i * 0.5, i, -i);
}

/** The measured process: fill the ring, then dump it while watching RSS. */
async function variant(dist, sizeMB, dir) {
  const { startFlightRecorder } = await import(new URL('index.js', dist).href);
  const tick = await tickOf(dist);
  const rec = await startFlightRecorder({ providers: 'Bench.App', sizeMB, dir, dumpOnCrash: false, signal: false });
  // ~40 bytes per Tick record: writing twice the ring's worth per thread wraps it for sure.
  const perThread = Math.ceil((2 * sizeMB * MiB) / 40 / (WORKERS + 1));
  const workers = Array.from({ length: WORKERS }, () => new Worker(SELF, { workerData: { dist: dist.href, count: perThread } }));
  writeTicks(tick, perThread);
  await Promise.all(workers.map((w) => new Promise((res) => w.once('message', res))));
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  // Resets VmHWM to the current RSS (Linux 4.0+), so the peak read after is the dump's.
  writeFileSync('/proc/self/clear_refs', '5');
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  const t0 = performance.now();
  const d = await rec.dump(join(dir, 'dump.tptrace'));
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, vmKiB('VmHWM') * 1024);
  const bytes = statSync(d.path).size;
  await rec.stop();
  for (const w of workers) await w.terminate();
  reportResult({ ms, growthMB: (peak - before) / MiB, beforeMB: before / MiB, bytes, events: d.eventsWritten });
}

async function measureOnce(dist, sizeMB) {
  const dir = mkdtempSync(join(tmpdir(), 'tp-ring-dump-'));
  try {
    return await runVariant(SELF, ['--variant', dist.href, String(sizeMB), dir], { nodeArgs: ['--expose-gc'], timeoutMs: 300_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function print(label, out, sizeMB) {
  const growth = median(out.map((o) => o.growthMB));
  const ms = median(out.map((o) => o.ms));
  const mb = median(out.map((o) => o.bytes)) / MiB;
  const events = median(out.map((o) => o.events));
  console.log(
    `  ${label.padEnd(8)} RSS growth ${growth.toFixed(1)} MiB (${out.map((o) => o.growthMB.toFixed(1)).join(', ')}) = ${(growth / sizeMB).toFixed(2)}× the ring; ` +
      `${ms.toFixed(0)} ms (${out.map((o) => o.ms.toFixed(0)).join(', ')}), ${mb.toFixed(0)} MiB file, ${events.toLocaleString('en-US')} events, ${((mb / ms) * 1000).toFixed(0)} MiB/s; RSS before ${median(out.map((o) => o.beforeMB)).toFixed(0)} MiB`,
  );
  return { growth, ms };
}

export async function run(sizeMB = SIZE_MB) {
  const builds = { this: new URL('../dist/', import.meta.url) };
  const before = process.env.TRACEPIPE_BENCH_BEFORE;
  if (before) builds.before = pathToFileURL(`${resolve(before, 'dist')}/`);
  const results = await interleavedRounds(ROUNDS, Object.keys(builds), (b) => measureOnce(builds[b], sizeMB));
  const now = print('this', results.this, sizeMB);
  if (before) {
    const then = print('before', results.before, sizeMB);
    const ratios = results.before.map((o, r) => o.ms / results.this[r].ms);
    console.log(`  dump time before / this, per round: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}×); RSS growth ${then.growth.toFixed(0)} → ${now.growth.toFixed(0)} MiB`);
  }
  return [{ check: `RSS growth of a ${sizeMB} MiB ring's dump`, value: `${now.growth.toFixed(1)} MiB`, target: `≤ ${sizeMB + HEADROOM_MB} MiB (ring + ${HEADROOM_MB})`, met: now.growth <= sizeMB + HEADROOM_MB }];
}

if (!isMainThread) {
  writeTicks(await tickOf(new URL(workerData.dist)), workerData.count);
  parentPort.postMessage('done');
} else if (process.argv[2] === '--variant') {
  await variant(new URL(process.argv[3]), Number(process.argv[4]), process.argv[5]);
} else if (process.argv[1] === SELF) {
  const checks = await run(process.argv[2] ? Number(process.argv[2]) : SIZE_MB);
  for (const c of checks) console.log(`  ${c.met ? 'met' : 'MISSED'}  ${c.check}: ${c.value} (target ${c.target})`);
}
