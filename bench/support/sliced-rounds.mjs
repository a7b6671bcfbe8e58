// One round of a pinned HTTP benchmark: a fresh server per cell (a variant on one Node.js), each
// measured in short slices, the cells taking turns in a new seeded order each slice. The machine's own
// speed drifts over seconds by more than the differences measured (whole 3 s runs one after the
// other differed by ±10 %); taking turns lands such a drift on every cell alike.
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './stats.mjs';
import { alive } from './pinned-http.mjs';

/** 0 … n-1 in an order drawn from `seed` (a Fisher–Yates shuffle driven by a 32-bit LCG). */
export function shuffled(n, seed) {
  const order = Array.from({ length: n }, (_, i) => i);
  let x = (seed * 2654435761 + 1) >>> 0;
  for (let i = n - 1; i > 0; i--) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * The timing both pinned HTTP benches use: 1 s of warm-up per server, then 3 s of load in 6 slices
 * taking turns, each slice's window ending 250 ms after its load (at least).
 */
export const SLICED_TIMING = { warmupS: 1, measuredS: 3, slices: 6, settleMs: 250 };

/**
 * Round `round` of `count` cells: `start(i)` starts cell i's server ({ child, url, ... }); all are
 * started and warmed up for `warmupS` (in the first slice's order), then each gets `measuredS` of load
 * in `slices` slices. `slice(i, server, runLoad)` brackets one slice: it calls `runLoad()` (the
 * autocannon result) and may return figures to add up over the slices. `finish(i, server, sums)`
 * ends the server; its result comes back with the sums (the load's seconds, and `loadCpuS` the load
 * generator's CPU seconds meanwhile), req/s and the median p99 of the slices. Servers still running
 * when something fails are killed.
 */
export async function slicedRound({ round, count, start, loader, warmupS, measuredS, slices, settleMs, slice, finish }) {
  const servers = [];
  // A fresh order for every slice (seeded: runs repeat), so no cell always follows the same one.
  const orders = Array.from({ length: slices }, (_, s) => shuffled(count, round * (slices + 1) + s));
  try {
    for (const i of orders[0]) servers[i] = await start(i);
    for (const i of orders[0]) await loader.run(servers[i].url, warmupS);
    await sleep(settleMs);
    const sums = servers.map(() => ({ requests: 0, seconds: 0, loadCpuS: 0, p99Ms: [] }));
    for (const order of orders) {
      for (const i of order) {
        const sum = sums[i];
        const figures = await slice(i, servers[i], async () => {
          const load = await loader.run(servers[i].url, measuredS / slices);
          sum.requests += load.requests;
          sum.seconds += load.seconds;
          sum.loadCpuS += load.cpuShare * load.seconds;
          sum.p99Ms.push(load.p99Ms);
          return load;
        });
        for (const [key, value] of Object.entries(figures ?? {})) sum[key] = (sum[key] ?? 0) + value;
      }
    }
    const results = [];
    for (const [i, sum] of sums.entries()) {
      results[i] = { ...sum, reqPerS: sum.requests / sum.seconds, p99Ms: median(sum.p99Ms), ...(await finish(i, servers[i], sum)) };
    }
    return results;
  } finally {
    for (const server of servers) if (server && alive(server.child)) server.child.kill('SIGKILL');
  }
}
