// One process of the gc-pause-cost benchmark (needs --expose-gc). What Runtime.GC runs inside a GC
// pause, taken alone and alternated in this one process (same heap, same code): nothing (`off`);
// perf_hooks' gc observer (`perf-hooks`: the route without the GC hook); the GC hook recording into
// a ring, its doorbell armed (`hook`: the route with it). Writing the events happens outside the
// pauses, when the loop turns, and is not timed here (the benchmark's second part times that).
import { createRequire } from 'node:module';
import { PerformanceObserver } from 'node:perf_hooks';
import { GcRing } from '../../dist/providers/gc-ring.js';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [gcsArg, turnsArg] = process.argv.slice(2);
const GCS = Number(gcsArg);
const TURNS = Number(turnsArg);
const hook = createRequire(import.meta.url)('../../native/gc-hook/build/Release/gc_hook.node');
const ring = new GcRing();
const MODES = ['off', 'perf-hooks', 'hook'];
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Scavenges back to back, of a nearly empty young generation: mostly the fixed cost of a pause, so
 * what runs inside it shows. Returns wall and main-thread on-CPU µs per scavenge.
 */
function collect(n) {
  const c0 = threadCpu();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) gc({ type: 'minor' });
  const t1 = process.hrtime.bigint();
  const c1 = threadCpu();
  return { wall: Number(t1 - t0) / n / 1000, cpu: c0 && c1 ? (c1.runNs - c0.runNs) / n / 1000 : undefined };
}

const results = Object.fromEntries(MODES.map((m) => [m, { wall: [], cpu: [] }]));
for (let t = -1; t < TURNS; t++) {
  // The order rotates each turn, so no mode always follows the same one.
  for (let k = 0; k < MODES.length; k++) {
    const mode = MODES[(t + 1 + k) % MODES.length];
    const observer = mode === 'perf-hooks' ? new PerformanceObserver(() => {}) : undefined;
    observer?.observe({ entryTypes: ['gc'] });
    if (mode === 'hook') {
      ring.setRecording(true);
      hook.attach(ring.sab, () => {});
      ring.arm();
    }
    const r = collect(GCS);
    hook.detach();
    ring.take(() => {});
    // Let perf_hooks deliver (and the doorbell ring) what was queued before the next mode is timed.
    await turn();
    await turn();
    observer?.disconnect();
    if (t < 0) continue; // warm-up
    results[mode].wall.push(r.wall);
    if (r.cpu !== undefined) results[mode].cpu.push(r.cpu);
  }
}
reportResult(Object.fromEntries(MODES.map((m) => [m, { wallUs: median(results[m].wall), cpuUs: results[m].cpu.length ? median(results[m].cpu) : undefined }])));
