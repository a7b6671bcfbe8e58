// Property tests for the reader on truncated, bit-flipped and random input. Each property runs in a
// worker under a deadline, so a reader that hangs fails here instead of stalling the suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBounded } from './helpers/bounded-worker.mjs';

const properties = new URL('./helpers/reader-fuzz-properties.mjs', import.meta.url);
const DEADLINE_MS = 60_000;

for (const [name, numRuns] of [
  ['truncation', 300],
  ['bitFlips', 400],
  ['randomBytes', 400],
  ['checksummedGarbage', 400],
]) {
  test(`reader property: ${name}`, async (t) => {
    // A fixed seed keeps CI deterministic; TRACEPIPE_FUZZ_SEED=random (or a number) explores further.
    const env = process.env.TRACEPIPE_FUZZ_SEED;
    const seed = env === 'random' ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0 : Number(env ?? 20261122) | 0;
    t.diagnostic(`seed ${seed} (replay with TRACEPIPE_FUZZ_SEED=${seed})`);
    const runs = await runBounded(properties, name, { seed, numRuns }, DEADLINE_MS);
    assert.equal(runs, numRuns);
  });
}
