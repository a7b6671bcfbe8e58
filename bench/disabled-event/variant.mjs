// One variant of the disabled-event benchmark, in its own process: `empty` or `disabled`.
import { bench } from '../support/tick-provider.mjs';
import { median } from '../support/stats.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [variant, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const E = bench.Tick;

// Both loops accumulate the index into a sink that is printed, so neither can be eliminated.
function emptyLoop(n) {
  let sink = 0;
  for (let i = 0; i < n; i++) {
    sink += i;
  }
  return sink;
}

function disabledLoop(n) {
  let sink = 0;
  for (let i = 0; i < n; i++) {
    if (E.enabled) E.write(1.5, 2.5, 3, -4);
    sink += i;
  }
  return sink;
}

const loop = { empty: emptyLoop, disabled: disabledLoop }[variant];
if (!loop) throw new Error(`unknown variant ${variant}`);
if (E.enabled) throw new Error('the event must be disabled (no session)');

let observed = 0;
for (let w = 0; w < 3; w++) observed += loop(ITERS); // warm-up: tiered up to optimized code
const nsPerOp = [];
for (let b = 0; b < BATCHES; b++) {
  const t0 = process.hrtime.bigint();
  observed += loop(ITERS);
  const t1 = process.hrtime.bigint();
  nsPerOp.push(Number(t1 - t0) / ITERS);
}
reportResult({ variant, nsPerOp: median(nsPerOp), batches: nsPerOp, observed });
