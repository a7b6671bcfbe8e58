import { median } from './stats.mjs';
import { reportResult } from './variant-process.mjs';

/**
 * Times `loop(iters)` (which returns a value so the JIT cannot drop its work) over `batches` batches
 * after 3 warm-up calls that tier it up to optimized code, and reports the median ns per iteration.
 */
export function reportTimedLoop(variant, loop, iters, batches) {
  let observed = 0;
  for (let w = 0; w < 3; w++) observed += loop(iters);
  const nsPerOp = [];
  for (let b = 0; b < batches; b++) {
    const t0 = process.hrtime.bigint();
    observed += loop(iters);
    const t1 = process.hrtime.bigint();
    nsPerOp.push(Number(t1 - t0) / iters);
  }
  reportResult({ variant, nsPerOp: median(nsPerOp), batches: nsPerOp, observed });
}
