// EventOrder against a model: whatever the arrival pattern, a release hands over exactly the pending
// events at or below the limit, sorted by timestamp with ties in arrival order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EventOrder } from '../dist/format/event-order.js';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261123);

// Arrival patterns: mostly ascending runs (a thread's chunk) that restart lower (the next thread's
// chunk, an event written late), with ties, and releases in between.
const step = fc.oneof(
  { weight: 8, arbitrary: fc.record({ push: fc.integer({ min: -3, max: 20 }) }) },
  { weight: 1, arbitrary: fc.record({ restart: fc.integer({ min: 0, max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ release: fc.integer({ min: 0, max: 600 }) }) },
);

function run(steps, windowNs) {
  const order = new EventOrder(windowNs);
  const pending = [];
  const got = [];
  const want = [];
  let ts = 0;
  let arrival = 0;
  const release = (limit) => {
    const out = [];
    if (limit === Infinity) order.releaseAll(out);
    else order.release(limit + windowNs, out);
    got.push(...out.map((e) => e.arrival));
    const due = pending.filter((e) => e.timestampNs <= limit).sort((a, b) => a.timestampNs - b.timestampNs || a.arrival - b.arrival);
    want.push(...due.map((e) => e.arrival));
    for (const e of due) pending.splice(pending.indexOf(e), 1);
  };
  for (const s of steps) {
    if (s.push !== undefined) {
      ts = Math.max(0, ts + s.push);
      const e = { timestampNs: ts, arrival: arrival++ };
      order.push(e);
      pending.push(e);
    } else if (s.restart !== undefined) ts = s.restart;
    else release(s.release);
  }
  release(Infinity);
  return { got, want, pushed: arrival };
}

test('releases match a stable sort of the pending events, in any arrival pattern', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 400 }), fc.integer({ min: 0, max: 50 }), (steps, windowNs) => {
      const { got, want, pushed } = run(steps, windowNs);
      assert.deepEqual(got, want);
      assert.equal(got.length, pushed, 'every event comes out exactly once');
    }),
    { numRuns: 500, seed: SEED },
  );
});

test('a long ascending stream released piece by piece holds only what is pending', () => {
  const order = new EventOrder(0);
  const out = [];
  let held = 0;
  for (let i = 0; i < 100_000; i++) {
    order.push({ timestampNs: i, arrival: i });
    if (i % 1000 === 999) {
      order.release(i - 10, out);
      held = Math.max(held, order.held.length);
    }
  }
  // 10 events stay pending after each release; released slots are reused, so at most ~1,010 are ever used.
  assert.ok(held < 4096, `the order holds ${held} slots`);
  order.releaseAll(out);
  assert.equal(out.length, 100_000);
  for (let i = 0; i < out.length; i++) assert.equal(out[i].arrival, i);
});
