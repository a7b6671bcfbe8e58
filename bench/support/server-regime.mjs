// The regime a pinned HTTP benchmark measured in. CPU per request means what a tracer's parts need only
// if the server was saturated: these are the shares of the load's time the server's main thread (its
// event loop, which serves every request) spent on a CPU and waiting for one (from json-server.mjs's
// thread-cpu.mjs readings; the rest it was idle), and the load generator's share of its CPU.
import { median } from './stats.mjs';

/** Below this share of its CPU busy under load, the server was not saturated: the run measured a latency-bound regime. */
const SATURATED = 0.9;

export const share = (x) => (Number.isNaN(x) ? '?' : `${(100 * x).toFixed(0)} %`);

/**
 * The regime of one server over its slices: `mainRunUs` and `mainWaitUs` its main thread's µs on a CPU
 * and waiting for one (NaN where schedstat is missing), `seconds` the load's, `loadCpuS` the load
 * generator's CPU seconds meanwhile (support/sliced-rounds.mjs sums both).
 */
export function regimeOf({ mainRunUs, mainWaitUs, seconds, loadCpuS }) {
  return { serverBusy: mainRunUs / 1e6 / seconds, serverWaiting: mainWaitUs / 1e6 / seconds, loadBusy: loadCpuS / seconds };
}

/** The header of regimeColumns'. */
export const REGIME_HEADER = `loop: ${'on CPU'.padStart(6)} ${'waiting'.padStart(7)}   ${'load on CPU'.padStart(11)}`;

/** One variant's regime, median over its rounds' results (regimeOf's figures). */
export function regimeColumns(results) {
  const med = (f) => share(median(results.map(f)));
  return `${med((res) => res.serverBusy).padStart(14)} ${med((res) => res.serverWaiting).padStart(7)}   ${med((res) => res.loadBusy).padStart(11)}`;
}

/**
 * Whether the untraced server (its rounds' `results`) was saturated: a warning printed when it was not,
 * telling a busy neighbour from a latency-bound load, and the check (information only where schedstat
 * is missing: not Linux).
 */
export function saturationCheck(node, results) {
  const busy = median(results.map((res) => res.serverBusy));
  const waiting = median(results.map((res) => res.serverWaiting));
  if (busy < SATURATED) {
    const regime = `the untraced server's event loop was on its CPU ${share(busy)} of the load's time and waited for it ${share(waiting)} (load generator on its CPU ${share(median(results.map((res) => res.loadBusy)))})`;
    // Waiting for the CPU: other processes share it. Neither: the round trip sets the pace.
    if (busy + waiting >= SATURATED) console.log(`  WARNING: ${regime}: other processes took its CPU, so the figures mix in the scheduler; measure on a quiet machine`);
    else console.log(`  WARNING: ${regime}: not saturated, so each request's CPU includes waiting for the next and waking up, which can swamp a tracer's cost; more requests in flight (BENCH_HTTP_PIPELINING, BENCH_HTTP_CONNECTIONS) saturate it`);
  }
  return {
    check: `Node ${node.version}: the untraced server saturated under load (share of the load's time its event loop was on its CPU)`,
    value: share(busy),
    target: `>= ${share(SATURATED)}`,
    met: Number.isNaN(busy) ? null : busy >= SATURATED,
  };
}
