// Runtime.GC when a thread never yields to its event loop and then ends, checked against V8's own
// --trace-gc: with the GC hook, every collection until the thread's last GCPausesFlushed has exactly
// one GCPause, however the process or the worker ends (the stop's own allocation may collect after
// it), but for a signal, which kills at once; without it (TRACEPIPE_GC_HOOK=0), what the trace holds is still one pause per collection, in
// order, and the documented gap is what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';
import { TRACE_GC_KINDS, checkMissingAfterFlush, checkTimings, expectGcHook, pairWithTraceGc, traceGcLines, traceGcOutput, tracedPauses } from './helpers/trace-gc.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/gc-blocking.mjs', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const hook = expectGcHook();
const PROFILES = { 'Runtime.GC alone': 'Runtime.GC', 'the default profile': undefined };
const EXPECT = hook ? 'one GCPause per collection V8 reports' : 'without the GC hook, the pauses delivered before the loop stopped turning, once each';

/** Runs the fixture traced by the startup session, its --trace-gc lines going to a file. */
async function runTraced(t, role, ending, providers) {
  const dir = await tempDir(t);
  const file = join(dir, 'gc.tptrace');
  const out = await traceGcOutput(t, dir);
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file };
  delete env.TRACEPIPE_PROVIDERS;
  if (providers) env.TRACEPIPE_PROVIDERS = providers;
  const fd = openSync(out, 'w');
  const child = spawn(process.execPath, ['--expose-gc', '--trace-gc', '--max-semi-space-size=1', `--import=${REGISTER}`, FIXTURE, role, ending], { stdio: ['ignore', fd, 'pipe'], env });
  closeSync(fd);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code, signal] = await once(child, 'close');
  return { code, signal, stderr, file, lines: traceGcLines(await readFile(out, 'utf8')) };
}

function expectedEnd(role, ending) {
  if (role === 'worker') return { code: 0, signal: null };
  if (ending.startsWith('SIG')) return { code: null, signal: ending };
  return { code: ending === 'throw' ? 1 : 0, signal: null };
}

async function check(t, role, ending, providers) {
  const r = await runTraced(t, role, ending, providers);
  assert.deepEqual({ code: r.code, signal: r.signal }, expectedEnd(role, ending), r.stderr);
  if (ending === 'throw' && role === 'main') assert.match(r.stderr, /the end of gc-blocking/);
  if (!hook && ending.startsWith('SIG')) return checkKilledWithoutAddon(t, r);
  const { pauses, flushedMs } = await tracedPauses(r.file);
  const { pairs, first, end } = pairWithTraceGc(r.lines, pauses);
  const marker = r.lines.findIndex((l) => l.forced);
  assert.ok(r.lines.length - marker >= 100, `the fixture made ${r.lines.length - marker} collections, need >= 100`);
  assert.ok(first <= marker, 'every collection since the program started is traced');
  if (!hook || ending.startsWith('SIG')) {
    // perf_hooks delivered what happened before the loop last turned, and nothing twice. A signal
    // kills at once, as untraced (no JavaScript listener runs first): the pauses the hook recorded
    // since the ring was last taken die with the main thread (docs/PROVIDERS.md).
    if (hook) {
      t.diagnostic(`killed by ${ending}: ${end - marker} of ${r.lines.length - marker} collections since the marker traced`);
      return;
    }
    t.diagnostic(`without the GC hook: ${end - marker} of ${r.lines.length - marker} collections since the marker traced`);
    assert.ok(pauses.every((p) => Number.isNaN(p.heapUsedAfter) && Number.isNaN(p.preemptions)), 'unknown without the hook');
    return;
  }
  assert.ok(end >= r.lines.findLastIndex((l) => l.forced) + 1, 'every collection up to the last forced one is traced');
  checkMissingAfterFlush(r.lines, end, pairs, flushedMs);
  const { preempted, late, longestMs } = checkTimings(pairs);
  if (end < r.lines.length) t.diagnostic(`${r.lines.length - end} collections after the last GCPausesFlushed (the stop's own)`);
  t.diagnostic(`${pairs.length} collections matched; ${preempted} preempted; otherwise durations at most ${longestMs.toFixed(3)} ms longer than V8's${late.length ? `, but for ${late.join('; ')}` : ''}`);
  const blocked = pairs.slice(marker - first + 1, pairs.findLastIndex(({ l }) => l.forced) + 1);
  if (role === 'main' && providers === undefined) await checkStallUntilEnd(r.file, ending, blocked);
}

/**
 * Without the addon (TRACEPIPE_GC_HOOK=0) there is no native signal handler, and tracepipe installs
 * no JavaScript one (it would change how the process dies): the signal kills at once, as untraced,
 * and the file ends at the drain's last pass (docs/PROVIDERS.md). What was written must read back:
 * every intact block's events, then a `truncated` error where the stream stops, and each pause the
 * trace holds is one of V8's collections, in order.
 */
async function checkKilledWithoutAddon(t, r) {
  const pauses = [];
  let error;
  try {
    for await (const e of readTrace(r.file)) if (e.provider === 'Runtime.GC' && e.name === 'GCPause') pauses.push(e.fields);
  } catch (err) {
    error = err;
  }
  if (error) assert.equal(error.code, 'truncated', String(error));
  const kinds = pauses.filter((p) => p.thread === 0).map((p) => p.kind).filter((k) => TRACE_GC_KINDS.has(k));
  const v8 = r.lines.map((l) => l.kind);
  const at = kinds.length === 0 ? 0 : v8.findIndex((_, i) => kinds.every((k, j) => v8[i + j] === k));
  assert.ok(at >= 0, `the ${kinds.length} traced pauses are a run of V8's ${v8.length} collections`);
  t.diagnostic(`killed by ${r.signal} without the addon: the file ends ${error ? 'truncated' : 'complete'}, ${kinds.length} of ${v8.length} collections traced`);
}

/**
 * With Runtime.EventLoop on, the watchdog reports the blocked stretch as a stall while it lasts. When
 * the process ends inside it (process.exit(), an uncaught exception: nothing turns the loop again)
 * the stall never ends; either way the pauses of the stretch all lie in that one stall, with no stall
 * boundary among them.
 */
async function checkStallUntilEnd(file, ending, blocked) {
  const stalls = [];
  for await (const e of readTrace(file)) {
    if (e.provider === 'Runtime.EventLoop' && e.name.startsWith('Stall') && e.fields.thread === 0) stalls.push(e);
  }
  const first = blocked[0].p.ts;
  const last = blocked.at(-1).p.ts;
  // The stall that had begun (heartbeat last seen blockedMs before StallStart) by the stretch's last pause.
  const start = stalls.findLast((e) => e.name === 'StallStart' && e.timestampNs - e.fields.blockedMs * 1e6 <= last);
  assert.ok(start, 'the blocked stretch is a stall');
  const before = stalls.findLast((e) => e.timestampNs < start.timestampNs);
  const ended = stalls.find((e) => e.name === 'StallEnd' && e.timestampNs > start.timestampNs);
  assert.ok(!before || before.name === 'StallEnd', 'stalls alternate');
  // A natural end and a signal (which reaches JavaScript only once the loop turns) end the stall first.
  if (ending === 'exit' || ending === 'throw') assert.equal(ended, undefined, 'the stall lasts until the process ends');
  assert.ok(!before || before.timestampNs < first, 'the previous stall ended before the stretch');
  for (const { p, l } of blocked) assert.ok(!ended || p.ts + p.durationMs * 1e6 <= ended.timestampNs, `the ${l.kind} at ${l.atMs} ms is inside the stall`);
}

for (const ending of ['natural', 'exit', 'throw', 'SIGTERM', 'SIGINT']) {
  for (const [name, providers] of Object.entries(PROFILES)) {
    const expect = !hook && ending.startsWith('SIG') ? 'without the addon, the process dies of the signal and the file reads back to where it stops' : EXPECT;
    test(`the main thread blocks, then the process ends (${ending}): ${expect}, with ${name}`, { timeout: 120_000 }, (t) => check(t, 'main', ending, providers));
  }
}

for (const ending of ['natural', 'exit', 'throw']) {
  test(`a worker blocks, then ends (${ending}): ${EXPECT}`, { timeout: 120_000 }, (t) => check(t, 'worker', ending, 'Runtime.GC'));
}
