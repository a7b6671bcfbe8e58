// The benchmarks' interval for a median: the order statistics the binomial distribution gives
// (textbook ranks for n = 6, 16, 40), none below 6 values at 95 %, and coverage checked by sampling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { medianInterval } from '../bench/support/stats.mjs';
import { seededRandom } from './helpers/seeded-random.mjs';

test('medianInterval: the textbook ranks, and nothing when there are too few values', () => {
  const ranks = (n) => {
    const ci = medianInterval(Array.from({ length: n }, (_, i) => n - i));
    return ci && [ci.low, ci.high];
  };
  assert.equal(ranks(5), undefined);
  assert.deepEqual(ranks(6), [1, 6]);
  assert.deepEqual(ranks(16), [4, 13]);
  assert.deepEqual(ranks(40), [14, 27]);
  assert.deepEqual(ranks(100), [40, 61]);
});

test('medianInterval: holds the true median of a skewed distribution at least 95 % of the time', () => {
  const random = seededRandom(20261124);
  let covered = 0;
  const trials = 2000;
  for (let t = 0; t < trials; t++) {
    // Exponential with median ln 2.
    const xs = Array.from({ length: 24 }, () => -Math.log(1 - random()));
    const ci = medianInterval(xs);
    if (ci.low <= Math.LN2 && Math.LN2 <= ci.high) covered++;
  }
  assert.ok(covered / trials >= 0.94, `covered ${covered} of ${trials}`);
});
