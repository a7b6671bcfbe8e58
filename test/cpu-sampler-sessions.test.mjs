// Runtime.CpuSampler with several sessions in one process: each session gets what it asked for, and
// can resolve every sample it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readTrace, startSession } from '../dist/index.js';
import { CpuProfileBuilder } from '../dist/analysis/cpu-profile.js';
import { tempDir } from './helpers/temp-dir.mjs';

const NATIVE = process.env.TRACEPIPE_GC_HOOK !== '0';

function spinFor(ms) {
  let x = 0;
  for (const end = Date.now() + ms; Date.now() < end; ) for (let i = 0; i < 10_000; i++) x = (x * 48271) % 2147483647;
  return x;
}

async function profileOf(file) {
  const b = new CpuProfileBuilder();
  for await (const e of readTrace(file)) b.add(e);
  return b.finish();
}

/** The median gap (µs) between the main thread's consecutive samples in `fn`. */
function medianGapUs(profile, fn) {
  const t = profile.threads.get(0);
  const ts = [];
  for (let i = 0; i < t.stack.length; i++) if (t.stack[i] >= 0 && profile.frames[profile.stackFrame[t.stack[i]]].functionName === fn) ts.push(t.timestampNs[i]);
  const gaps = ts.slice(1).map((x, i) => (x - ts[i]) / 1000).sort((a, b) => a - b);
  return gaps[gaps.length >> 1];
}

test('a session that joins with a finer IntervalUs gets samples at that interval', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const coarse = await startSession({ providers: 'Runtime.CpuSampler:*:4:IntervalUs=5000', output: join(dir, 'coarse.tptrace') });
  spinFor(200);
  const fine = await startSession({ providers: 'Runtime.CpuSampler:*:4:IntervalUs=500', output: join(dir, 'fine.tptrace') });
  await new Promise((resolve) => setTimeout(resolve, 250));
  spinFor(800);
  await fine.stop();
  await coarse.stop();
  const gap = medianGapUs(await profileOf(join(dir, 'fine.tptrace')), 'spinFor');
  // At 500 µs; a loaded machine stretches some gaps, never the median to the coarse session's 5 ms.
  assert.ok(gap < 2500, `median gap between samples ${gap} µs, asked for 500`);
});

test('a session that starts while another samples resolves the samples the watchdog writes during stalls', { timeout: 60_000, skip: !NATIVE && 'the watchdog writes samples on the native route only' }, async (t) => {
  const dir = await tempDir(t);
  const first = await startSession({ providers: 'Runtime.CpuSampler', output: join(dir, 'first.tptrace') });
  let stopped = false;
  // 300 ms stalls, 50 ms apart: the watchdog writes the main thread's samples during each.
  const stallMaker = () => {
    if (stopped) return;
    spinFor(300);
    setTimeout(stallMaker, 50);
  };
  stallMaker();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const second = await startSession({ providers: 'Runtime.CpuSampler', output: join(dir, 'second.tptrace') });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  stopped = true;
  await second.stop();
  await first.stop();
  for (const name of ['first', 'second']) {
    const profile = await profileOf(join(dir, `${name}.tptrace`));
    const samples = profile.threads.get(0)?.timestampNs.length ?? 0;
    assert.ok(samples > 100, `${name}: ${samples} samples`);
    assert.equal(profile.unresolvedSamples, 0, `${name}: ${profile.unresolvedSamples} of ${samples} samples unresolved`);
  }
});
