// One variant of the idle-cost benchmark, in its own process (started with or without
// `--import tracepipe/register` and its environment variables): does nothing, and reports the CPU
// time of all its threads (process.cpuUsage) over a window after start-up, and over its part after
// `splitMs` (V8 collects once, some seconds after a start that loaded code: the part after shows
// the steady state).
import { reportResult } from '../support/variant-process.mjs';

const [settleMs, windowMs, splitMs] = process.argv.slice(2).map(Number);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = (u) => (u.user + u.system) / 1000;
const perSecond = (a, b, ta, tb) => (cpuMs(b) - cpuMs(a)) / ((tb - ta) / 1000);
await sleep(settleMs - performance.now());
const a = process.cpuUsage();
const t0 = performance.now();
await sleep(splitMs - performance.now());
const s = process.cpuUsage();
const ts = performance.now();
await sleep(t0 + windowMs - performance.now());
const b = process.cpuUsage();
const t1 = performance.now();
reportResult({ cpuMsPerSecond: perSecond(a, b, t0, t1), steadyCpuMsPerSecond: perSecond(s, b, ts, t1) });
