import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runtimeGC, runtimeEventLoop } from '../dist/index.js';
import { TraceWriter } from '../dist/format/trace-writer.js';
import { generateWriter } from '../dist/schema/event-writer.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';
import { fakeRecordTarget, recordAt0 } from './helpers/fake-record-target.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const run = promisify(execFile);

async function cli(...args) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const TYPES = [runtimeGC.GCPause, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd, runtimeEventLoop.Delay];

function payload(type, values) {
  const t = fakeRecordTarget(4096);
  generateWriter(computePayloadLayout(type.fields), 1, { now: () => 0 }, false, (k, v) => { throw new Error(`writer refused field ${k}: ${String(v)}`); }).call({ _targets: [t] }, ...values);
  const r = recordAt0(t);
  return t.u8.slice(r.payloadStart, r.payloadStart + r.payloadLength);
}

const S = 1e9;
const MS = 1e6;
// 20 scavenges of 1..20 ms, 3 mark-compacts, one finished and one unfinished stall, two delay
// intervals, and 3 events thread 0 dropped: every figure of the report is known.
const SCAVENGES = Array.from({ length: 20 }, (_, i) => ({ t: (1 + i * 0.4) * S, kind: 'scavenge', ms: i + 1 }));
const MARK_COMPACTS = [
  { t: 2.05 * S, kind: 'mark-compact', ms: 60 },
  { t: 4.05 * S, kind: 'mark-compact', ms: 15 },
  { t: 6.05 * S, kind: 'mark-compact', ms: 5 },
];

function knownTrace() {
  const w = new TraceWriter();
  w.header({
    pid: 4321, processTitle: 'node', argv: ['node', 'app.mjs'], execArgv: [], nodeVersion: process.version, tracepipeVersion: '0.0.0-test',
    platform: process.platform, arch: process.arch, hostname: 'test', clock: { wallClockNs: '1700000000000000000', monotonicNs: '1000' },
    session: { id: 1, providers: 'Runtime.GC,Runtime.EventLoop', bufferingMode: 'drop', bufferSizeMB: 1 },
  });
  TYPES.forEach((type, i) => w.metadata(i + 1, type));
  const events = [
    ...[...SCAVENGES, ...MARK_COMPACTS].map((p) => ({ t: p.t, type: 0, values: [p.ms * MS, p.kind, 0, NaN, 0, 0] })),
    { t: 3 * S, type: 1, values: [0, 120] },
    { t: 3.3 * S, type: 2, values: [0, 300] },
    { t: 10.9 * S, type: 1, values: [0, 150] },
    { t: 5 * S, type: 3, values: [1, 20, 30, 2, 0.5, 1000, 90] },
    { t: 6 * S, type: 3, values: [3, 250, 300, 8, 0.25, 3000, 80] },
    { t: 11 * S, type: 0, values: [0.5 * MS, 'incremental-marking', 0, NaN, 0, 0] },
  ].sort((a, b) => a.t - b.t);
  let seq = 0;
  for (const e of events) {
    if (seq === 5) seq += 3; // three dropped attempts
    e.t = Math.round(e.t); // the format stores integer nanoseconds
    const p = payload(TYPES[e.type], e.values);
    w.event(e.type + 1, 0, seq++, e.t, p, 0, p.length);
  }
  w.sequencePoint(11 * S, 0, [{ threadId: 0, nextSeq: seq, dropped: 3 }]);
  w.end({ events: events.length, dropped: 3, endTimeNs: 11 * S, maxLatenessNs: 0, threads: 1, eventTypes: TYPES.length });
  const parts = [];
  for (let b = w.take(); b; b = w.take()) parts.push(b.slice());
  return Buffer.concat(parts);
}

test('report: GC pauses by kind, severity counts, longest pauses, stalls, loop delay and drops are exact', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'known.tptrace');
  await writeFile(file, knownTrace());
  const { code, stdout, stderr } = await cli('report', file, '--json');
  assert.equal(code, 0, stderr);
  const r = JSON.parse(stdout);
  assert.equal(r.wallNs, 10 * S);
  const sc = r.gc.byKind.scavenge;
  assert.deepEqual([sc.count, sc.totalMs, sc.p50Ms, sc.p90Ms, sc.p99Ms, sc.maxMs], [20, 210, 10, 18, 20, 20]);
  assert.ok(Math.abs(sc.percentOfWall - 2.1) < 1e-9);
  assert.deepEqual([r.gc.byKind['mark-compact'].count, r.gc.byKind['mark-compact'].totalMs], [3, 80]);
  assert.equal(r.gc.all.count, 24);
  assert.equal(r.gc.aboveInfo, 13, '10..20 ms scavenges, 60 and 15 ms mark-compacts');
  assert.equal(r.gc.aboveWarn, 1);
  assert.deepEqual(r.gc.bySeverity, { debug: 11, info: 12, warn: 1 });
  assert.equal(r.gc.longest.length, 10);
  assert.deepEqual(r.gc.longest.slice(0, 3).map((p) => [p.kind, p.durationMs, p.timeNs]), [['mark-compact', 60, Math.round(2.05 * S)], ['scavenge', 20, Math.round(8.6 * S)], ['scavenge', 19, Math.round(8.2 * S)]]);
  assert.deepEqual(r.stalls, { count: 1, totalMs: 300, longest: [{ timeNs: Math.round(3.3 * S), thread: 0, durationMs: 300 }], unfinished: 1, stillGoing: [{ thread: 0, sinceNs: Math.round(10.9 * S) - 150 * MS }] });
  assert.deepEqual(r.eventLoop, [{ threadId: 0, intervals: 2, p50Ms: 1, worstP99Ms: 250, maxMs: 300, meanUtilization: 0.3125 }]);
  assert.deepEqual(r.drops, { dropped: 3, ranges: 1, byThread: { 0: 3 } });

  const custom = JSON.parse((await cli('report', file, '--json', '--info-ms', '5', '--warn-ms', '15')).stdout);
  assert.equal(custom.gc.aboveInfo, 19, '5..20 ms scavenges and all three mark-compacts');
  assert.equal(custom.gc.aboveWarn, 8, '15..20 ms scavenges, 60 and 15 ms mark-compacts');

  const text = await cli('report', file);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /GC pauses \(Runtime\.GC\): 24/);
  assert.match(text.stdout, /scavenge\s+20\s+210\.00 ms\s+2\.10%\s+10\.00 ms\s+18\.00 ms\s+20\.00 ms\s+20\.00 ms/);
  assert.match(text.stdout, /at or above 10 ms \(info\): 13\s+at or above 50 ms \(warn\): 1/);
  assert.match(text.stdout, /2\.050000 s\s+thread 0\s+mark-compact\s+60\.00 ms/);
  assert.match(text.stdout, /event-loop stalls \(Runtime\.EventLoop\): 1, 300\.00 ms in total, 1 still going/);
  assert.match(text.stdout, /dropped events: 3 in 1 range /);
});

test('report: GC kinds named like Object.prototype members (constructor, __proto__, toString) are kinds like any other', async (t) => {
  const w = new TraceWriter();
  w.header({
    pid: 1, processTitle: 'node', argv: [], execArgv: [], nodeVersion: process.version, tracepipeVersion: '0.0.0-test',
    platform: process.platform, arch: process.arch, hostname: 'test', clock: { wallClockNs: '1700000000000000000', monotonicNs: '1000' },
    session: { id: 1, providers: 'Runtime.GC', bufferingMode: 'drop', bufferSizeMB: 1 },
  });
  w.metadata(1, TYPES[0]);
  const kinds = ['constructor', '__proto__', 'toString', 'constructor'];
  kinds.forEach((kind, i) => {
    const p = payload(TYPES[0], [(i + 1) * MS, kind, 0, NaN, 0, 0]);
    w.event(1, 0, i, (i + 1) * S, p, 0, p.length);
  });
  w.sequencePoint(5 * S, 0, [{ threadId: 0, nextSeq: kinds.length, dropped: 0 }]);
  w.end({ events: kinds.length, dropped: 0, endTimeNs: 5 * S, maxLatenessNs: 0, threads: 1, eventTypes: 1 });
  const parts = [];
  for (let b = w.take(); b; b = w.take()) parts.push(b.slice());
  const file = join(await tempDir(t), 'proto-kinds.tptrace');
  await writeFile(file, Buffer.concat(parts));
  const r = await cli('report', file, '--json');
  assert.equal(r.code, 0, r.stderr);
  const byKind = JSON.parse(r.stdout).gc.byKind;
  assert.deepEqual(Object.entries(byKind).map(([k, v]) => [k, v.count, v.totalMs]), [['constructor', 2, 5], ['__proto__', 1, 2], ['toString', 1, 3]]);
  const text = await cli('report', file);
  assert.equal(text.code, 0, text.stderr);
});

test('report: bad input gets one clear line and a non-zero exit', async (t) => {
  const dir = await tempDir(t);
  const missing = await cli('report', join(dir, 'nope.tptrace'));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^tracepipe: no such file: .*nope\.tptrace\n$/);
  const junk = join(dir, 'junk.tptrace');
  await writeFile(junk, 'not a trace at all, just text\n');
  const bad = await cli('report', junk);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr.split('\n').length, 2, bad.stderr);
  const flag = await cli('report', junk, '--warn-ms=-3');
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--warn-ms must be a non-negative number/);
  const order = await cli('report', junk, '--info-ms', '20', '--warn-ms', '10');
  assert.match(order.stderr, /--warn-ms \(10\) must not be below --info-ms \(20\)/);
  assert.equal((await cli('report')).code, 2);
});

test('report: a truncated trace reports its intact part, warns, and exits 1', async (t) => {
  const dir = await tempDir(t);
  const whole = knownTrace();
  const file = join(dir, 'cut.tptrace');
  await writeFile(file, whole.subarray(0, whole.length - 200));
  const { code, stdout } = await cli('report', file);
  assert.equal(code, 1);
  assert.match(stdout, /WARNING/);
  assert.match(stdout, /GC pauses \(Runtime\.GC\): \d+/);
  assert.ok((await readFile(file)).length > 0);
});
