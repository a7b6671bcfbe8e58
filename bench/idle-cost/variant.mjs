// One variant of the idle-cost benchmark, in its own process (started with or without
// `--import tracepipe/register` and its environment variables): does nothing, and reports the CPU
// time of all its threads (process.cpuUsage) over a window after start-up, and over the window of
// the same length that follows it (when a start-up's one-off costs, such as V8's memory reducer,
// are behind it).
import { reportResult } from '../support/variant-process.mjs';

const [settleMs, windowMs] = process.argv.slice(2).map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU ms per second of all threads over the next `ms`. */
async function cpuOver(ms) {
  const a = process.cpuUsage();
  const t0 = performance.now();
  await sleep(ms);
  const b = process.cpuUsage();
  return (b.user - a.user + b.system - a.system) / 1000 / ((performance.now() - t0) / 1000);
}

await sleep(settleMs - performance.now());
const cpuMsPerSecond = await cpuOver(windowMs);
reportResult({ cpuMsPerSecond, laterCpuMsPerSecond: await cpuOver(windowMs) });
