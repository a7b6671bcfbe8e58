// One variant of the disabled-event benchmark, in its own process: `empty` or `disabled`.
import { bench } from '../support/tick-provider.mjs';
import { reportTimedLoop } from '../support/timed-loop.mjs';

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

reportTimedLoop(variant, loop, ITERS, BATCHES);
