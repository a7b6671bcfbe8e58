// The W3C ids the OTLP export derives (src/otlp/otlp-ids.ts) are computed in 32-bit halves for speed;
// they must equal SplitMix64's finalizer in exact 64-bit arithmetic (written here with BigInt, from its
// published definition) for every span id: either side of 2^32 and 2^53, and bigints past 2^53.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OtlpIds } from '../dist/otlp/otlp-ids.js';
import { seededRandom } from './helpers/seeded-random.mjs';

const M64 = (1n << 64n) - 1n;
function splitMix64Finalizer(z) {
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  return z ^ (z >> 31n);
}
function fnv1a64(s) {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & M64;
  return h;
}
const hex64 = (v) => (v === 0n ? 1n : v).toString(16).padStart(16, '0');

test('span and trace ids equal SplitMix64 over the seeded span id, in exact 64-bit arithmetic', () => {
  const seed = 'host/1234/1700000000000000000';
  const key = fnv1a64(seed);
  const ids = new OtlpIds(seed);
  const random = seededRandom(28);
  const samples = [0n, 1n, 2n, 0xffffffffn, 0x100000000n, 0x100000001n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n + 5n, M64];
  for (let i = 0; i < 2000; i++) samples.push(BigInt(Math.floor(random() * 2 ** 53)));
  for (const id of samples) {
    const span = hex64(splitMix64Finalizer(id ^ key));
    const trace = hex64(splitMix64Finalizer(id ^ key ^ 0x9e3779b97f4a7c15n)) + span;
    assert.equal(Buffer.from(ids.spanId(id)).toString('hex'), span, `span id of ${id}`);
    assert.equal(Buffer.from(ids.traceId(id)).toString('hex'), trace, `trace id of ${id}`);
    if (id <= 2n ** 53n) assert.equal(Buffer.from(ids.spanId(Number(id))).toString('hex'), span, `span id of ${id} as a number`);
  }
});

test('an id whose mix is zero becomes 1 (W3C forbids all-zero ids)', () => {
  // The finalizer is a bijection with mix(0) = 0: the span id equal to the key mixes to zero.
  const seed = 'zero';
  const key = fnv1a64(seed);
  assert.equal(Buffer.from(new OtlpIds(seed).spanId(key)).toString('hex'), '0000000000000001');
});
