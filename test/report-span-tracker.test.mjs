// The span table of `tracepipe report` (src/cli/span-tracker.ts) against a reference that keeps every
// span and computes self time the obvious way (each span's duration minus the union of its children's
// intervals, a child still open at its parent's end counting up to that end); and its memory, which
// must not grow with the number of spans open at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import fc from 'fast-check';
import { SpanTracker } from '../dist/cli/span-tracker.js';
import { percentile } from '../dist/cli/percentile.js';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261126);

const begin = (id, parent, threadId, ts, span = 'S') => ({ provider: 'P', name: `${span}.Begin`, threadId, timestampNs: ts, fields: { spanId: BigInt(id), parentSpanId: BigInt(parent) } });
const end = (id, threadId, ts, error = false, span = 'S') => ({ provider: 'P', name: `${span}.End`, threadId, timestampNs: ts, fields: { spanId: BigInt(id), error, errorName: error ? 'E' : '' } });

/** Length of the union of intervals. */
function unionLength(intervals) {
  let total = 0;
  let reach = -Infinity;
  for (const [a, b] of [...intervals].sort((x, y) => x[0] - y[0])) {
    if (b <= reach) continue;
    total += b - Math.max(a, reach);
    reach = b;
  }
  return total;
}

/** The figures per span name, from every span kept. */
function reference(events) {
  const spans = new Map();
  const open = new Map();
  for (const e of events) {
    const id = e.fields.spanId;
    if (e.name.endsWith('.Begin')) {
      const s = { name: `P/${e.name.slice(0, -6)}`, start: e.timestampNs, children: [] };
      spans.set(id, s);
      open.get(e.fields.parentSpanId)?.children.push(s);
      open.set(id, s);
    } else if (open.has(id)) {
      const s = open.get(id);
      open.delete(id);
      s.end = e.timestampNs;
      s.error = e.fields.error;
    }
  }
  const byName = {};
  for (const s of spans.values()) {
    if (s.end === undefined) continue;
    const covered = unionLength(s.children.map((c) => [c.start, Math.min(c.end ?? Infinity, s.end)]));
    const a = (byName[s.name] ??= { durations: [], self: 0, errors: 0 });
    a.durations.push((s.end - s.start) / 1e6);
    a.self += (s.end - s.start - covered) / 1e6;
    if (s.error) a.errors++;
  }
  return { byName, unfinished: [...spans.values()].filter((s) => s.end === undefined).length };
}

/**
 * Span activity in timestamp order on up to 3 threads: a step begins a span (a child of any open
 * span, or a root; one in eight never ends) or ends an open one, children often after their parent,
 * under a few span names.
 */
const plans = fc.array(
  fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 })), thread: fc.integer({ min: 0, max: 2 }), op: fc.integer({ min: 0, max: 99 }), pick: fc.nat() }),
  { maxLength: 300 },
);

function eventsOf(plan) {
  const events = [];
  const open = [];
  let ts = 0;
  let next = 1;
  for (const { dt, thread, op, pick } of plan) {
    ts += dt;
    if (op < 55 || open.length === 0) {
      const parent = op % 6 === 0 || open.length === 0 ? 0 : open[pick % open.length].id;
      const s = { id: next++, thread, span: ['A', 'B', 'C'][op % 3] };
      if (op % 8 !== 1) open.push(s);
      events.push(begin(s.id, parent, thread, ts, s.span));
    } else {
      const [s] = open.splice(pick % open.length, 1);
      events.push(end(s.id, s.thread, ts, op % 9 === 0, s.span));
    }
  }
  return events;
}

test('property: counts, total and self time, percentiles and errors per span name equal a reference that keeps every span', () => {
  fc.assert(
    fc.property(plans, (plan) => {
      const events = eventsOf(plan);
      const tracker = new SpanTracker();
      for (const e of events) tracker.add(e);
      const r = tracker.report();
      const want = reference(events);
      assert.equal(r.unfinished, want.unfinished);
      assert.equal(r.setAside, 0);
      assert.deepEqual(r.byName.map((x) => x.span).sort(), Object.keys(want.byName).sort());
      for (const x of r.byName) {
        const a = want.byName[x.span];
        const sorted = [...a.durations].sort((p, q) => p - q);
        assert.equal(x.count, sorted.length);
        assert.equal(x.errors, a.errors);
        assert.equal(x.p50Ms, percentile(sorted, 50));
        assert.equal(x.p99Ms, percentile(sorted, 99));
        assert.ok(Math.abs(x.selfMs - a.self) < 1e-9, `${x.span}: self ${x.selfMs} ms, reference ${a.self} ms`);
      }
    }),
    { numRuns: 500, seed: SEED },
  );
});

test('property: past the limit of open spans, every begin is still finished or unfinished once, and self time stays within the total', () => {
  fc.assert(
    fc.property(plans, fc.integer({ min: 1, max: 6 }), (plan, maxOpen) => {
      const events = eventsOf(plan);
      const tracker = new SpanTracker(maxOpen);
      for (const e of events) tracker.add(e);
      const r = tracker.report();
      const begins = events.filter((e) => e.name.endsWith('.Begin')).length;
      assert.equal(r.finished + r.unfinished, begins);
      assert.ok(r.setAside <= r.unfinished);
      // An end whose begin was set aside counts as an end without a begin.
      assert.equal(r.finished + r.endsWithoutBegin, events.length - begins);
      for (const x of r.byName) assert.ok(x.selfMs >= -1e-9 && x.selfMs <= x.totalMs + 1e-9, `${x.span}: self ${x.selfMs} of ${x.totalMs}`);
      assert.ok(r.oldestUnfinished.length === Math.min(10, r.unfinished));
    }),
    { numRuns: 500, seed: SEED },
  );
});

/** The heap's size after a full collection. */
function heapAfterGc() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test('memory: spans that never end cost no more at 4n than at n (past 65,536 open, the oldest are set aside and counted)', () => {
  const n = 100_000;
  const runs = [n, 4 * n].map((count) => {
    const before = heapAfterGc();
    const tracker = new SpanTracker();
    // Roots with 99 children each: none ends.
    for (let i = 1; i <= count; i++) tracker.add(begin(i, i % 100 === 1 ? 0 : i - (i % 100) + 1, 0, i));
    return { count, grown: heapAfterGc() - before, report: tracker.report() };
  });
  const [small, large] = runs.map((r) => r.grown);
  assert.ok(large < 1.5 * small, `heap grown by ${(small / 2 ** 20).toFixed(1)} MB for ${n} open spans, ${(large / 2 ** 20).toFixed(1)} MB for ${4 * n}`);
  for (const { count, report } of runs) {
    assert.equal(report.unfinished, count);
    assert.equal(report.setAside, count - 65_536);
    assert.deepEqual(report.oldestUnfinished.map((u) => u.startNs), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }
});

test('a parent with many children one after another and one open all along: its self time is what the open child leaves', () => {
  const tracker = new SpanTracker();
  tracker.add(begin(1, 0, 0, 0, 'Root'));
  tracker.add(begin(2, 1, 0, 10, 'Open'));
  let ts = 100;
  for (let id = 3; id < 200_003; id++) {
    tracker.add(begin(id, 1, 0, ts));
    tracker.add(end(id, 0, ts + 5));
    ts += 10;
  }
  tracker.add(end(1, 0, ts, false, 'Root'));
  const r = tracker.report();
  const by = Object.fromEntries(r.byName.map((x) => [x.span, x]));
  // The child that never ends covers the root from 10 ns to its end, over every other child.
  assert.equal(by['P/Root'].selfMs, 10 / 1e6);
  assert.equal(by['P/S'].count, 200_000);
  assert.equal(r.unfinished, 1);
});
