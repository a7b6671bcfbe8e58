// One variant of the idle-cost benchmark, in its own process (started with or without
// `--import tracepipe/register` and its environment variables): does nothing, and reports the CPU
// time of all its threads (process.cpuUsage) over a window after start-up.
import { reportResult } from '../support/variant-process.mjs';

const [settleMs, windowMs] = process.argv.slice(2).map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
await sleep(settleMs - performance.now());
const a = process.cpuUsage();
const t0 = performance.now();
await sleep(windowMs);
const b = process.cpuUsage();
const seconds = (performance.now() - t0) / 1000;
reportResult({ cpuMsPerSecond: (b.user - a.user + b.system - a.system) / 1000 / seconds });
