// What one interval of the loop sampler's delay histogram costs (10 readings, then the percentiles,
// max, mean and count a publication reads, and the reset): perf_hooks' default range (1 ns to 2^53)
// against the one the sampler uses (1 µs to an hour), both at three significant digits.
// `node bench/counters/delay-histogram.mjs`
import { createHistogram } from 'node:perf_hooks';

const INTERVALS = 2000;
for (const [name, options] of [
  ['default (1 ns to 2^53)', undefined],
  ['1 µs to an hour', { lowest: 1_000, highest: 3_600e9, figures: 3 }],
]) {
  const h = createHistogram(options);
  const before = process.cpuUsage();
  for (let i = 0; i < INTERVALS; i++) {
    for (let k = 0; k < 10; k++) h.record(1_000 + k * 137_000);
    void [h.percentile(50), h.percentile(99), h.max, h.mean, h.count];
    h.reset();
  }
  const used = process.cpuUsage(before);
  console.log(`${name}: ${((used.user + used.system) / INTERVALS).toFixed(1)} µs of CPU per interval`);
}
