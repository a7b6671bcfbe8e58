import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { defineProvider, readTrace, startSession, RUNTIME_COUNTERS } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const app = defineProvider('Test.CounterApp', { counters: { Queue: { id: 1, unit: 'jobs', doc: 'jobs waiting' } } });

async function eventsOf(file) {
  const out = [];
  for await (const e of readTrace(file)) out.push(e);
  return out;
}

/** The publications in a trace: each closes with IntervalMs; values by counter name. */
function publications(events) {
  const out = [];
  let current = {};
  for (const e of events) {
    if (e.provider !== 'Runtime.Counters' || !e.name.endsWith('.Counter')) continue;
    const name = e.name.slice(0, -'.Counter'.length);
    current[name] = Object.values(e.fields)[0];
    if (name === 'IntervalMs') {
      out.push(current);
      current = {};
    }
  }
  return out;
}

// The spaces of the V8s of Node 20, 22 and 24 are listed rather than read from node:v8 (which the
// import would load, and node:stream with it): on whichever Node runs this, they are V8's own.
test("Runtime.Counters' heap-space counters are this V8's spaces, in its order", () => {
  const spaces = getHeapSpaceStatistics().map((s) => s.space_name);
  const described = RUNTIME_COUNTERS.filter((c) => c.description.startsWith('V8 heap space ')).map((c) => c.description.split(' ')[3]);
  assert.deepEqual(described, spaces);
  assert.deepEqual(RUNTIME_COUNTERS.filter((c) => c.name.endsWith('SpaceUsed')).map((c) => c.id), spaces.map((_, i) => 40 + i));
});

test('Runtime.Counters: memory, CPU and GC figures agree with the process’s own memoryUsage(), cpuUsage() and its GC observer; every counter is described', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'counters.tptrace');
  let ownGc = 0;
  const observer = new PerformanceObserver((list) => (ownGc += list.getEntries().length));
  const session = await startSession({ providers: 'Runtime.Counters:*:5:IntervalSec=0.25,Runtime.GC,Test.CounterApp', output: file });
  // From the session on: a first session loads tracepipe's session machinery, whose collections come before it.
  observer.observe({ entryTypes: ['gc'] });
  const cpuFrom = process.cpuUsage();
  const fromMs = performance.now();
  app.Queue.set(7);
  // Work in slices the loop can tick between: CPU and allocation the counters must see.
  let junk = [];
  while (performance.now() - fromMs < 1500) {
    const sliceEnd = performance.now() + 40;
    while (performance.now() < sliceEnd) {
      junk.push({ n: junk.length });
      if (junk.length > 200_000) junk = [];
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const mem = process.memoryUsage();
  await session.stop();
  const cpuUsedMs = process.cpuUsage(cpuFrom).user / 1000;
  await new Promise((r) => setImmediate(r));
  observer.disconnect();
  const events = await eventsOf(file);
  const pubs = publications(events);
  assert.ok(pubs.length >= 5, `publications every 0.25 s over 1.5 s (got ${pubs.length})`);
  const names = RUNTIME_COUNTERS.map((c) => c.name);
  for (const name of names) assert.ok(name in pubs[1], `${name} published`);

  const last = pubs.at(-1);
  assert.ok(Math.abs(last.HeapUsed - mem.heapUsed) / mem.heapUsed < 0.1, `heap used ${last.HeapUsed} vs memoryUsage ${mem.heapUsed}`);
  assert.ok(Math.abs(last.Rss - mem.rss) / mem.rss < 0.1, `RSS ${last.Rss} vs memoryUsage ${mem.rss}`);

  // CPU: the per-interval percentages, weighted by their intervals, add up to the CPU time used.
  const counted = pubs.reduce((sum, p) => sum + (p.CpuUser * p.IntervalMs) / 100, 0);
  assert.ok(Math.abs(counted - cpuUsedMs) < cpuUsedMs * 0.25 + 30, `CPU user ${counted.toFixed(1)} ms counted vs ${cpuUsedMs.toFixed(1)} ms used`);

  // GC: every pause once, by kind, and the kinds add up; the pauses Runtime.GC wrote are the same ones.
  const gcCount = pubs.reduce((sum, p) => sum + p.GcCount, 0);
  const byKind = pubs.reduce((sum, p) => sum + p.GcScavengeCount + p.GcMinorMarkCompactCount + p.GcMarkCompactCount + p.GcIncrementalMarkingCount + p.GcWeakCallbacksCount + p.GcOtherCount, 0);
  assert.equal(byKind, gcCount);
  assert.ok(gcCount >= 3, `the workload collected (${gcCount})`);
  assert.ok(Math.abs(gcCount - ownGc) <= 2, `GC count ${gcCount} vs the process's own observer ${ownGc}`);
  const written = events.filter((e) => e.name === 'GCPause');
  assert.ok(Math.abs(written.length - gcCount) <= 2, `GCPause events ${written.length} vs GcCount ${gcCount}`);
  const pauseMs = pubs.reduce((sum, p) => sum + p.GcPauseMs, 0);
  const writtenMs = written.reduce((sum, e) => sum + Number(e.fields.durationNs) / 1e6, 0);
  assert.ok(Math.abs(pauseMs - writtenMs) <= writtenMs * 0.1 + 2, `pause time ${pauseMs} vs GCPause ${writtenMs}`);

  // Descriptions: Runtime.Counters' and the application's, with their units.
  const info = new Map(events.filter((e) => e.name === 'CounterInfo').map((e) => [`${e.fields.provider}/${e.fields.counter}`, e.fields]));
  for (const c of RUNTIME_COUNTERS) {
    const d = info.get(`Runtime.Counters/${c.name}`);
    assert.ok(d && d.unit === c.unit && d.description.length > 10, `${c.name} described`);
  }
  assert.deepEqual({ ...info.get('Test.CounterApp/Queue') }, { provider: 'Test.CounterApp', counter: 'Queue', unit: 'jobs', kind: 'gauge', description: 'jobs waiting' });
  assert.ok(events.some((e) => e.name === 'Queue.Counter' && e.fields.jobs === 7), 'the application counter is in the same stream');
  const stats = events.filter((e) => e.name === 'SessionStats');
  assert.ok(stats.length >= 5 && stats.every((e) => e.fields.session === session.id));
  assert.ok(stats.reduce((s, e) => s + e.fields.eventsWritten, 0) > 0, 'the session counts the events its drain wrote');
});

test('Runtime.Counters and Runtime.EventLoop share one delay monitor: both get every interval, neither steals the other’s readings', { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'shared.tptrace');
  const session = await startSession({ providers: 'Runtime.Counters:*:5:IntervalSec=0.2,Runtime.EventLoop:0x1:5:IntervalSec=0.2', output: file });
  const end = performance.now() + 1200;
  while (performance.now() < end) {
    const busy = performance.now() + 30;
    while (performance.now() < busy);
    await new Promise((r) => setTimeout(r, 20));
  }
  await session.stop();
  const events = await eventsOf(file);
  const delays = events.filter((e) => e.name === 'Delay');
  const maxes = events.filter((e) => e.name === 'LoopDelayMax.Counter');
  assert.ok(delays.length >= 4, `Delay events (${delays.length})`);
  // One sample per tick for both: the same figures, not two halves of the sampler's readings.
  const byDelay = delays.map((e) => e.fields.maxMs.toFixed(6));
  const byCounter = maxes.map((e) => e.fields.ms.toFixed(6));
  const shared = byCounter.filter((m) => byDelay.includes(m)).length;
  assert.ok(shared >= Math.min(byDelay.length, byCounter.length) - 1, `the same intervals (${shared} of ${byCounter.length} shared)`);
  // A loop blocked all interval long has none (its delay is the interval), nor has the partial interval
  // the stop closes when it is shorter than the sampler's 10 ms period.
  const unread = delays.filter((e) => e.fields.samples === 0 && e.fields.maxMs <= 100 && e.fields.intervalMs >= 20);
  assert.deepEqual(unread.map((e) => e.fields), [], 'every interval had its sampler readings');
});
