// The OTLP export remembers the latest ended spans (src/otlp/ended-spans.ts) so that a child begun
// after its parent ended still gets the parent's trace: bounded to 65,536, the oldest forgotten first,
// and a span id ended again found with what it last ended with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndedSpans } from '../dist/otlp/ended-spans.js';

const LIMIT = 65_536;
const bytes = (n) => Uint8Array.of(n & 255, (n >> 8) & 255, (n >> 16) & 255);

test('ended spans are found by id with their trace, trace state and span id', () => {
  const ended = new EndedSpans();
  ended.remember(7, bytes(1), 'a=1', bytes(2));
  ended.remember(2n ** 60n, bytes(3), '', bytes(4));
  const slot = ended.find(7);
  assert.deepEqual([ended.traceId(slot), ended.traceState(slot), ended.spanId(slot)], [bytes(1), 'a=1', bytes(2)]);
  const big = ended.find(2n ** 60n);
  assert.deepEqual([ended.traceId(big), ended.traceState(big), ended.spanId(big)], [bytes(3), '', bytes(4)]);
  assert.equal(ended.find(8), -1);
});

test('at most 65,536 are remembered, the oldest forgotten first; an id ended again is found as it last ended', () => {
  const ended = new EndedSpans();
  for (let id = 1; id <= LIMIT; id++) ended.remember(id, bytes(id), '', bytes(id + 1));
  ended.remember(1, bytes(99), 'again', bytes(98));
  // Span 1 ended again took the oldest slot (its own): 2 is now the oldest, and goes next.
  assert.equal(ended.traceState(ended.find(1)), 'again');
  ended.remember(LIMIT + 1, bytes(5), '', bytes(6));
  assert.equal(ended.find(2), -1);
  assert.deepEqual(ended.traceId(ended.find(1)), bytes(99));
  assert.deepEqual(ended.traceId(ended.find(3)), bytes(3));
  assert.deepEqual(ended.traceId(ended.find(LIMIT + 1)), bytes(5));
  // Past two rounds of the ring every early id is gone and the latest are all there.
  for (let id = LIMIT + 2; id <= 3 * LIMIT; id++) ended.remember(id, bytes(id), '', bytes(id));
  assert.equal(ended.find(1), -1);
  assert.equal(ended.find(2 * LIMIT), -1);
  for (const id of [2 * LIMIT + 1, 3 * LIMIT]) assert.deepEqual(ended.traceId(ended.find(id)), bytes(id));
});
