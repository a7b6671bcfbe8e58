// One variant of the idle-recorder benchmark, in its own process (started with or without
// `--import tracepipe/register` and TRACEPIPE_FLIGHT_RECORDER): does nothing, and reports the CPU
// time of all its threads (process.cpuUsage) over a window after start-up has settled.
import { reportResult } from '../support/variant-process.mjs';

const [settleMs, windowMs] = process.argv.slice(2).map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
await sleep(settleMs);
const a = process.cpuUsage();
await sleep(windowMs);
const b = process.cpuUsage();
const cpuMs = (b.user - a.user + b.system - a.system) / 1000;
reportResult({ cpuMsPerSecond: cpuMs / (windowMs / 1000) });
