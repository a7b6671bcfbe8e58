// Durations measured in whole nanoseconds reach people exactly: no float noise
// (110.11900000000605 ms) in dump, report, report --json or the exports; counts agree with their
// nouns ("1 stall"); a stall still going says since when.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runtimeEventLoop, runtimeGC, startSession } from '../dist/index.js';
import { SpanTracker } from '../dist/cli/span-tracker.js';
import { countOf, formatRate } from '../dist/cli/format-count.js';
import { writeTrace } from './helpers/trace-builder.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const run = promisify(execFile);
const cli = (...args) => run(process.execPath, [CLI, ...args], { maxBuffer: 64 << 20 });

const MS = 1e6;
/** A number as JSON or text prints it: at most 6 decimals is whole nanoseconds of a millisecond. */
const WHOLE_NS = /^-?\d+(\.\d{1,6})?$/;

/**
 * GC pauses of 0.1 and 0.2 ms (0.1 + 0.2 is 0.30000000000000004 in doubles), two stalls whose
 * durations carry the float noise of the clock readings they came from (as tracers before this
 * change wrote them), and a third stall still going when the trace ended.
 */
async function noisyTrace(t) {
  const file = join(await tempDir(t), 'noisy.tptrace');
  const types = [runtimeGC.GCPause, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd];
  const [pause, start, end] = types;
  let seq = 0;
  const at = (type, timestampNs, values) => ({ type, threadId: 1, sequence: seq++, timestampNs, values });
  await writeTrace(file, types, [
    at(pause, 1_000 * MS, [0.1 * MS, 'scavenge', 0, NaN, 0, 0]),
    at(pause, 1_500 * MS, [0.2 * MS, 'scavenge', 0, NaN, 0, 0]),
    at(start, 2_000 * MS, [0, 100.11900000000605]),
    at(end, 2_100 * MS, [0, 110.11900000000605]),
    at(start, 3_000 * MS, [0, 60.89773800000002]),
    at(end, 3_100 * MS, [0, 75.89773800000002]),
    at(start, 4_000 * MS, [0, 110.11900000000605]),
    at(pause, 4_100 * MS, [1, 'scavenge', 0, NaN, 0, 0]),
  ]);
  return file;
}

test('report --json: totals add whole nanoseconds, stall durations are what the clock measured', async (t) => {
  const file = await noisyTrace(t);
  const r = JSON.parse((await cli('report', file, '--json')).stdout);
  assert.equal(r.gc.all.totalMs, 0.300001);
  assert.deepEqual(r.stalls.longest.map((s) => s.durationMs), [110.119, 75.897738]);
  assert.equal(r.stalls.totalMs, 186.016738);
  assert.equal(r.stalls.unfinished, 1);
  assert.deepEqual(r.stalls.stillGoing, [{ thread: 0, sinceNs: 4_000 * MS - 110.119 * MS }]);
});

test('report: a stall still going says since when; counts agree with their nouns', async (t) => {
  const file = await noisyTrace(t);
  const { stdout } = await cli('report', file);
  assert.match(stdout, /event-loop stalls \(Runtime\.EventLoop\): 2, 186\.02 ms in total, 1 still going when the trace ended\n(?: +ended .*\n){2} +still going since +3\.889881 s +thread 0\n/);
  assert.doesNotMatch(stdout, /\d{7,}/, 'no float noise in the text');
});

test('convert --to chrome: a stall still going carries its blocked time as measured', async (t) => {
  const file = await noisyTrace(t);
  const out = join(await tempDir(t), 'noisy.json');
  await cli('convert', file, '--to', 'chrome', '-o', out);
  const trace = JSON.parse(await readFile(out, 'utf8'));
  const stalls = trace.traceEvents.filter((e) => e.name === 'stall');
  assert.deepEqual(stalls.map((e) => e.args).sort((a, b) => Object.keys(a)[0].localeCompare(Object.keys(b)[0])), [{ blockedMs: 110.119 }, { durationMs: 110.119 }, { durationMs: 75.897738 }]);
});

test('the span table adds durations as nanoseconds: 0.1 ms + 0.2 ms is 0.3 ms', () => {
  const tracker = new SpanTracker();
  const ev = (name, ts, fields) => ({ provider: 'P', name, threadId: 1, timestampNs: ts, fields });
  tracker.add(ev('S.Begin', 0, { spanId: 1n, parentSpanId: 0n }));
  tracker.add(ev('S.End', 100_000, { spanId: 1n, error: false, errorName: '' }));
  tracker.add(ev('S.Begin', 200_000, { spanId: 2n, parentSpanId: 0n }));
  tracker.add(ev('S.End', 400_000, { spanId: 2n, error: false, errorName: '' }));
  const [s] = tracker.report().byName;
  assert.equal(s.totalMs, 0.3);
  assert.equal(s.selfMs, 0.3);
});

test('a real stall: dump, query and the JSONL export give blockedMs and durationMs in whole nanoseconds', { timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'stall.tptrace');
  const session = await startSession({ providers: 'Runtime.EventLoop:*:5:IntervalSec=10;StallMs=50', output: file });
  await new Promise((r) => setTimeout(r, 300));
  // Stalls: each has two durations whose noise, before this change, showed nearly always.
  for (let i = 0; i < 4; i++) {
    const end = performance.now() + 150;
    while (performance.now() < end);
    await new Promise((r) => setTimeout(r, 100));
  }
  await session.stop();
  const { stdout } = await cli('dump', file);
  const values = [...stdout.matchAll(/(?:blockedMs|durationMs)=(\S+)/g)].map((m) => m[1]);
  assert.ok(values.length >= 2, `at least one stall, with its start and its end:\n${stdout}`);
  for (const v of values) assert.match(v, WHOLE_NS);
  const sql = 'SELECT blockedMs AS ms FROM "Runtime.EventLoop/StallStart" UNION ALL SELECT durationMs FROM "Runtime.EventLoop/StallEnd"';
  const rows = JSON.parse((await cli('query', file, sql, '--format', 'json')).stdout);
  assert.equal(rows.length, values.length);
  for (const r of rows) assert.match(String(r.ms), WHOLE_NS);
  const jsonl = join(await tempDir(t), 'stall.jsonl');
  await cli('convert', file, '--to', 'jsonl', '-o', jsonl);
  const exported = (await readFile(jsonl, 'utf8')).match(/"(?:blockedMs|durationMs)":[^,}]+/g) ?? [];
  assert.equal(exported.length, values.length);
  for (const m of exported) assert.match(m.split(':')[1], WHOLE_NS);
});

test('counts and rates for people: nouns agree, rates scale', () => {
  assert.equal(countOf(1, 'stall'), '1 stall');
  assert.equal(countOf(0, 'stall'), '0 stalls');
  assert.equal(countOf(1234, 'range'), '1,234 ranges');
  assert.equal(formatRate(0, 'events/s'), '0 events/s');
  assert.equal(formatRate(850.4, 'events/s'), '850 events/s');
  assert.equal(formatRate(12_345, 'events/s'), '12.3 k events/s');
  assert.equal(formatRate(1_940_000, 'events/s'), '1.94 M events/s');
  assert.equal(formatRate(999_700, 'events/s'), '1.00 M events/s');
  assert.equal(formatRate(3_100_000, 'B/s'), '3.10 MB/s');
  assert.equal(formatRate(640, 'B/s'), '640 B/s');
});
