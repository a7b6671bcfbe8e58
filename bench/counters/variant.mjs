// One variant of the counters benchmark, in its own process started with `--import tracepipe/register`.
// With COUNTERS_CLI set, it first runs `tracepipe counters collect --pid <itself>` (a separate process,
// whose CPU is not counted here: the cost measured is the target's) and waits until its session runs.
//   throughput <ms>        JSON round trips in 5 ms slices that yield to the loop: per second of wall
//                          time, and per second of the process's CPU (all its threads)
//   idle <from>:<ms>,...   does nothing; reports the CPU of all its threads per second over each window,
//                          from <from> ms after the process started, for <ms>
import { spawn } from 'node:child_process';
import { processInfo } from 'tracepipe';
import { reportResult } from '../support/variant-process.mjs';

const [mode, a] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let collector;
if (process.env.COUNTERS_CLI) {
  collector = spawn(process.execPath, [process.env.COUNTERS_CLI, 'counters', 'collect', '--pid', String(process.pid), '--format', 'csv', '-o', process.env.COUNTERS_OUT], { stdio: 'ignore' });
  const deadline = performance.now() + 30_000;
  // The diagnostics server starts 100 ms after tracepipe/register loads: until then this process is not attachable.
  const sessions = () => processInfo(process.pid).then((info) => info.sessions.length, () => 0);
  while ((await sessions()) === 0) {
    if (performance.now() > deadline) throw new Error('the counters session did not start');
    await sleep(100);
  }
}

if (mode === 'throughput') {
  await sleep(1000);
  const doc = { id: 1, name: 'order', items: Array.from({ length: 20 }, (_, i) => ({ sku: `sku-${i}`, qty: i, price: i * 1.5 })) };
  let ops = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < Number(a)) {
    const slice = performance.now() + 5;
    while (performance.now() < slice) {
      JSON.parse(JSON.stringify(doc));
      ops++;
    }
    await new Promise((r) => setImmediate(r));
  }
  const used = process.cpuUsage(cpu);
  reportResult({ opsPerSecond: ops / ((performance.now() - t0) / 1000), opsPerCpuSecond: ops / ((used.user + used.system) / 1e6) });
} else {
  const cpuMsPerSecond = [];
  for (const [from, ms] of a.split(',').map((w) => w.split(':').map(Number))) {
    await sleep(from - performance.now());
    const u = process.cpuUsage();
    const t0 = performance.now();
    await sleep(ms);
    const d = process.cpuUsage(u);
    cpuMsPerSecond.push((d.user + d.system) / 1000 / ((performance.now() - t0) / 1000));
  }
  reportResult({ cpuMsPerSecond });
}
collector?.kill('SIGINT');
