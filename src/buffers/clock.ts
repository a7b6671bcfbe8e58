/**
 * Every thread timestamps with its own performance.now() (cheap), whose origin differs per thread.
 * This finds where that origin sits on the process-wide monotonic clock (process.hrtime), so the
 * drain can put every thread's timestamps on one clock.
 */
export function threadOriginNs(): bigint {
  let best = 0n;
  let bestSpread = Infinity;
  for (let k = 0; k < 16; k++) {
    const a = process.hrtime.bigint();
    const now = performance.now();
    const b = process.hrtime.bigint();
    const spread = Number(b - a);
    if (spread < bestSpread) {
      bestSpread = spread;
      best = (a + b) / 2n - BigInt(Math.round(now * 1e6));
    }
  }
  return best;
}
