import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readTrace, monitorGCPauses } from '../dist/index.js';
import { TraceParser } from '../dist/format/trace-parser.js';
import { tempDir } from './helpers/temp-dir.mjs';
import { checkMissingAfterFlush, checkTimings, expectGcHook, pairWithTraceGc, traceGcLines, traceGcOutput, tracedPauses } from './helpers/trace-gc.mjs';

const INDEX = new URL('../dist/index.js', import.meta.url).href;
const hook = expectGcHook();

// Allocates in rounds: short-lived objects make scavenges, a retained set that grows and is dropped
// makes V8 start mark-compacts on its own; a few forced gc() calls are the markers of the window.
const CHILD = `
const { startSession } = await import(${JSON.stringify(INDEX)});
const { writeFileSync } = await import('node:fs');
const session = await startSession({ providers: 'Runtime.GC', output: process.argv[2] });
const turn = () => new Promise((r) => setTimeout(r, 1));
// Blocks the event loop for 1.5 s while allocating: perf_hooks cannot deliver those pauses until it ends.
function stall() {
  const sinceOrigin = () => Number(process.hrtime.bigint() - session.originNs);
  const startNs = sinceOrigin();
  const end = performance.now() + 1500;
  let keep = [];
  while (performance.now() < end) {
    keep.push(new Array(2000).fill(0).map((n, i) => ({ i })));
    if (keep.length > 400) keep = [];
  }
  writeFileSync(process.argv[2] + '.stall.json', JSON.stringify({ startNs, endNs: sinceOrigin() }));
}
await turn();
globalThis.gc();
let retained = [];
for (let round = 0; round < 20; round++) {
  for (let i = 0; i < 80; i++) {
    const batch = [];
    for (let j = 0; j < 5000; j++) batch.push({ round, i, j, s: 'item-' + j });
    retained.push(batch);
    if (i % 10 === 0) await turn();
  }
  retained = [];
  if (process.env.STALL_ROUND === String(round)) stall();
  await turn();
  if (round % 4 === 1) globalThis.gc();
  await turn();
}
await turn();
globalThis.gc();
await turn();
const r = await session.stop();
if (r.status !== 'stopped' || r.eventsDropped !== 0) throw new Error('session ' + JSON.stringify(r));
`;

/**
 * When each GC pause reached the trace: the time of the first sequence point after it in stream
 * order (the drain writes one at the start of each pass). Keyed by the pause's timestamp.
 */
async function arrivalTimes(file) {
  const arrivals = new Map();
  let waiting = [];
  const parser = new TraceParser({
    event: (e) => {
      if (e.name === 'GCPause') waiting.push(e.timestampNs);
    },
    sequencePoint: (sp) => {
      for (const ts of waiting) arrivals.set(ts, sp.timeNs);
      waiting = [];
    },
  });
  parser.push(await readFile(file));
  parser.finish();
  return arrivals;
}

/** Runs the child under --trace-gc and checks every pause against V8's lines; returns the main thread's pauses. */
async function compareWithTraceGc(t, env = {}) {
  const dir = await tempDir(t);
  const script = join(dir, 'child.mjs');
  const file = join(dir, 'gc.tptrace');
  await writeFile(script, CHILD);
  const out = await traceGcOutput(t, dir);
  const fd = openSync(out, 'w');
  const child = spawn(process.execPath, ['--expose-gc', '--trace-gc', '--max-semi-space-size=1', script, file], { stdio: ['ignore', fd, 'pipe'], env: { ...process.env, ...env } });
  closeSync(fd);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = await once(child, 'close');
  assert.equal(code, 0, stderr);
  const lines = traceGcLines(await readFile(out, 'utf8'));

  let lastTs = -Infinity;
  for await (const e of readTrace(file)) {
    assert.ok(e.timestampNs >= lastTs, 'the reader keeps late GC events in timestamp order');
    lastTs = e.timestampNs;
  }
  const { thread, pauses, flushedMs } = await tracedPauses(file);
  assert.equal(thread, 0, 'the main thread ran gc()');
  const { pairs, end } = pairWithTraceGc(lines, pauses);
  const window = pairs.slice(0, pairs.findLastIndex(({ l }) => l.forced) + 1);
  const count = (kind) => window.filter(({ l }) => l.kind === kind).length;
  assert.ok(window.length >= 200, `workload made ${window.length} GCs, need >= 200`);
  assert.ok(count('mark-compact') - window.filter(({ l }) => l.forced).length >= 5, 'at least 5 mark-compacts V8 started on its own');
  // Every collection up to the session's stop: the child stops it after the last forced one.
  assert.ok(end >= lines.findLastIndex((l) => l.forced) + 1, 'every collection up to the last forced one is traced');
  assert.ok(pauses.some((p) => p.kind === 'incremental-marking'), 'incremental-marking pauses are recorded as their own kind');
  if (hook) {
    checkMissingAfterFlush(lines, end, pairs, flushedMs);
    const { preempted, late, longestMs } = checkTimings(pairs);
    t.diagnostic(`${pairs.length} pauses compared (${count('scavenge')} scavenges, ${count('mark-compact')} mark-compacts); ${preempted} preempted; otherwise at most ${longestMs.toFixed(3)} ms longer than --trace-gc${late.length ? `, but for ${late.join('; ')}` : ''}`);
  } else {
    // perf_hooks says nothing of preemption: durations are only checked never to be short.
    for (const { p, l } of pairs) assert.ok(p.durationMs - l.durationMs >= -0.2, `${l.kind} at ${l.atMs} ms: trace ${p.durationMs} ms, --trace-gc ${l.durationMs} ms`);
  }
  const stall = env.STALL_ROUND ? JSON.parse(await readFile(`${file}.stall.json`, 'utf8')) : undefined;
  return { pauses, stall, arrivals: await arrivalTimes(file) };
}

test(`every GC pause matches V8's own --trace-gc: same kinds, same order${hook ? ', true start, duration within 0.2 ms unless preempted, heap after' : ''}`, { timeout: 120_000 }, async (t) => {
  await compareWithTraceGc(t);
});

test('pauses during a 1.5 s blocked loop come from the watchdog while it lasts, still exactly once each', { timeout: 120_000, skip: !hook && 'without the GC hook they arrive when the loop turns' }, async (t) => {
  // The watchdog's thread from the session's start (it would start a second in otherwise, test/watchdog-first-second.test.mjs).
  const { pauses, stall, arrivals } = await compareWithTraceGc(t, { STALL_ROUND: '5', TRACEPIPE_WATCHDOG_AFTER_MS: '0' });
  const inStall = pauses.filter((p) => p.ts >= stall.startNs && p.ts <= stall.endNs);
  const byWatchdog = inStall.filter((p) => p.writer !== 0);
  const latency = byWatchdog.map((p) => arrivals.get(p.ts) - (p.ts + p.durationMs * 1e6)).sort((a, b) => a - b);
  const duringStall = byWatchdog.filter((p) => arrivals.get(p.ts) < stall.endNs).length;
  const ms = (ns) => (ns / 1e6).toFixed(0);
  t.diagnostic(`${byWatchdog.length} of the stall's ${inStall.length} pauses written by the watchdog; ${duringStall} reached the trace before the ${ms(stall.endNs - stall.startNs)} ms stall ended; latency median ${ms(latency[latency.length >> 1])} ms, max ${ms(latency[latency.length - 1])} ms`);
  assert.ok(inStall.length >= 100, `${inStall.length} pauses in the stall`);
  assert.ok(byWatchdog.length >= inStall.length / 2, 'the watchdog wrote most of them');
  assert.ok(duringStall >= inStall.length / 2, 'most of them reached the trace while the loop was still blocked');
});

test('monitorGCPauses classifies every pause by severity with no session, and stops', { timeout: 30_000 }, async () => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const before = process.hrtime.bigint();
  const seen = [];
  const stop = monitorGCPauses({ thresholdsMs: { info: 0.5, warn: 2 }, onPause: (p) => seen.push(p) });
  let keep = [];
  for (let i = 0; i < 40; i++) {
    keep.push(new Array(20_000).fill(i).map((n) => ({ n })));
    if (i % 10 === 9) {
      keep = [];
      gc();
    }
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 20));
  stop();
  const after = process.hrtime.bigint();
  const count = seen.length;
  assert.ok(seen.filter((p) => p.kind === 'mark-compact').length >= 4, 'the forced collections are reported');
  for (const p of seen) {
    assert.equal(p.severity, p.durationMs >= 2 ? 'warn' : p.durationMs >= 0.5 ? 'info' : 'debug');
    assert.ok(p.startNs >= Number(before) - 1e6 && p.startNs <= Number(after), 'startNs is on the process.hrtime clock');
    assert.equal(typeof p.flags, 'number');
  }
  gc();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(seen.length, count, 'no callback after stop()');
});

test('monitorGCPauses rejects bad options and survives a throwing callback', async () => {
  assert.throws(() => monitorGCPauses({}), /onPause/);
  assert.throws(() => monitorGCPauses({ thresholdsMs: { info: -1 }, onPause() {} }), /thresholdsMs.info/);
  assert.throws(() => monitorGCPauses({ thresholdsMs: { info: 20, warn: 10 }, onPause() {} }), /below/);
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  let calls = 0;
  const stop = monitorGCPauses({ onPause: () => { calls++; throw new Error('boom'); } });
  for (let i = 0; i < 20 && calls < 2; i++) {
    new Array(200_000).fill(0).map((n) => ({ n }));
    await new Promise((r) => setTimeout(r, 5));
  }
  stop();
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  assert.ok(calls >= 2, 'kept calling after the first throw');
  assert.equal(warnings.filter((m) => m.includes('boom')).length, 1, 'one warning');
});
