// One process of gc-pause-cost's second part: a loop that allocates a little and yields on every turn
// (setImmediate), so V8 scavenges a few hundred times a second while the loop keeps turning: what a
// GC consumer costs outside the pauses, where the loop delivers them. `node loop.mjs [observer]`;
// with `observer`, a perf_hooks gc observer that does nothing (Node's own delivery, no tracepipe).
// tracepipe's variants add `--import tracepipe/register` and a startup session of Runtime.GC.
// Reports the turns completed from 1.5 s to 4.5 s after start (the session's threads have started).
import { PerformanceObserver } from 'node:perf_hooks';
import { reportResult } from '../support/variant-process.mjs';

const WARMUP_MS = 1500;
const MEASURED_MS = 3000;
if (process.argv[2] === 'observer') new PerformanceObserver(() => {}).observe({ entryTypes: ['gc'] });
let keep = [];
let turns = 0;
let first = 0;
const from = Date.now() + WARMUP_MS;
const to = from + MEASURED_MS;
function turn() {
  for (let i = 0; i < 200; i++) keep.push({ a: i, b: `x${i}` });
  if (keep.length > 2000) keep = [];
  turns++;
  const now = Date.now();
  if (first === 0 && now >= from) first = turns;
  if (now < to) setImmediate(turn);
  else reportResult({ turnsPerSecond: ((turns - first) * 1000) / MEASURED_MS });
}
turn();
