// The HTML report's data, without a browser: the time grid keeps every spike and every event (property
// tests, fixed seeds), and ReportCharts holds every pause, stall and drop range of a trace built with
// known contents.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readTrace, runtimeEventLoop, runtimeGC, runtimeGCHeap } from '../dist/index.js';
import { ReportCharts } from '../dist/cli/report/report-charts.js';
import { CountSeries, MAX_BUCKETS, MinMaxSeries, TimeGrid } from '../dist/cli/report/time-grid.js';
import { readReport } from '../dist/cli/trace-report.js';
import { writeTrace } from './helpers/trace-builder.mjs';

const SEED = Number(process.env.TRACEPIPE_TEST_SEED ?? 15);

let dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-report-charts-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const sample = fc.record({ t: fc.integer({ min: 0, max: 1e13 }), v: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }) });

test('min/max downsampling keeps each bucket\'s extremes at their own times, and the global ones', () => {
  fc.assert(
    fc.property(fc.array(sample, { minLength: 1, maxLength: 3000 }), (samples) => {
      const grid = new TimeGrid();
      const s = grid.join(new MinMaxSeries(grid, 'x'));
      const counts = grid.join(new CountSeries(grid));
      for (const { t, v } of samples) {
        s.add(t, v);
        counts.add(t);
      }
      const out = s.series();
      assert.ok(out.x.length <= 2 * MAX_BUCKETS);
      // Every point is a sample, in time order.
      const seen = new Set(samples.map(({ t, v }) => `${t / 1e9}|${v}`));
      out.x.forEach((x, i) => assert.ok(seen.has(`${x}|${out.y[i]}`), `point ${x},${out.y[i]} is a sample`));
      for (let i = 1; i < out.x.length; i++) assert.ok(out.x[i] >= out.x[i - 1]);
      // The extremes survive, and each bucket's: nothing in a bucket lies outside its points.
      const vs = samples.map((x) => x.v);
      assert.ok(out.y.includes(Math.min(...vs)) && out.y.includes(Math.max(...vs)));
      const timeOf = new Map(samples.map(({ t }) => [t / 1e9, t]));
      const bucketOf = (t) => Math.floor(t / grid.widthNs);
      for (const { t, v } of samples) {
        const inBucket = out.y.filter((_, i) => bucketOf(timeOf.get(out.x[i])) === bucketOf(t));
        assert.ok(inBucket.length > 0 && v >= Math.min(...inBucket) && v <= Math.max(...inBucket), `sample ${t},${v} within its bucket's points`);
      }
      // Counting loses nothing.
      assert.equal(counts.counts.reduce((a, b) => a + b, 0), samples.length);
      assert.ok(counts.counts.length <= MAX_BUCKETS);
    }),
    { seed: SEED, numRuns: 60 },
  );
});

test('ReportCharts holds every pause (time order, kind, duration), stall and drop range of a known trace', async () => {
  const file = join(dir, 'known.tptrace');
  const events = [];
  const seq = new Map();
  const push = (type, threadId, timestampNs, values, skip = 0) => {
    const sequence = (seq.get(threadId) ?? 0) + skip;
    seq.set(threadId, sequence + 1);
    events.push({ type, threadId, sequence, timestampNs, values });
  };
  const kinds = ['scavenge', 'mark-compact', 'incremental-marking'];
  for (let i = 0; i < 300; i++) {
    const t = 1e6 + i * 7e6;
    push(runtimeGC.GCPause, i % 3, t, [BigInt(100_000 + i * 1000), kinds[i % 3], 0, 1e6 * i, i % 3, 0], i % 50 === 49 ? 2 : 0);
    if (i % 10 === 0) push(runtimeGCHeap.HeapStats, 0, t + 1, ['interval', BigInt(i * 1e6), BigInt(2e9), 4n * 10n ** 9n, 0n, 0n, 1, 0]);
    if (i % 60 === 5) push(runtimeEventLoop.StallStart, 4, t + 2, [0, 60]);
    if (i % 60 === 25) push(runtimeEventLoop.StallEnd, 4, t + 3, [0, 140]);
  }
  const { drops } = await writeTrace(file, [runtimeGC.GCPause, runtimeGCHeap.HeapStats, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd], events, { finalSeq: { 1: 200 } });
  const charts = new ReportCharts();
  const options = { infoMs: 10, warnMs: 50 };
  const { report, profile } = await readReport(file, options, (b) => charts.add(b));
  const data = charts.data(file, report, 'text', options, profile);
  const pauses = events.filter((e) => e.type === runtimeGC.GCPause);
  assert.deepEqual(
    data.pauses.startS.map((s, i) => [s, data.pauses.durationMs[i], data.pauses.kinds[data.pauses.kind[i]], data.pauses.thread[i], data.pauses.heapAfterMB[i]]),
    pauses.map((e) => [e.timestampNs / 1e9, Number(e.values[0]) / 1e6, e.values[1], e.values[4], e.values[3] / (1024 * 1024)]),
  );
  assert.equal(data.stalls.startS.length, events.filter((e) => e.type === runtimeEventLoop.StallEnd).length);
  // A stall runs from its StallStart's time minus blockedMs, for durationMs.
  const firstStart = events.find((e) => e.type === runtimeEventLoop.StallStart);
  assert.equal(data.stalls.startS[0], (firstStart.timestampNs - 60e6) / 1e9);
  assert.deepEqual(data.stalls.durationMs, data.stalls.durationMs.map(() => 140));
  assert.deepEqual(data.drops.thread.map((t, i) => [t, data.drops.count[i]]).sort(), drops.map((d) => [d.threadId, d.count]).sort());
  assert.equal(data.drops.omitted, 0);
  // Events per second: every event counted once.
  const counted = data.rates.series.reduce((n, s) => n + s.perSecond.reduce((a, b) => a + b, 0) * data.rates.bucketS, 0);
  assert.ok(Math.abs(counted - events.length) < 1e-6, `${counted} vs ${events.length}`);
  assert.deepEqual(data.heap.map((s) => s.name), ['total, thread 0', 'used, thread 0']);
  assert.equal(data.trace.events, events.length);
  const summary = await readTrace(file).summary();
  assert.equal(report.drops.ranges, summary.drops.length);
  assert.deepEqual(data.cpu, { functions: [], urls: [], threads: [] }, 'no CPU samples, no flame graph');
});
