// Runtime.CpuSampler with several sessions in one process: each session gets what it asked for, and
// can resolve every sample it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

test('once the stack table is full, new functions sampled add nothing to the frame table either', { timeout: 60_000, skip: !NATIVE && 'the native sampler only' }, async (t) => {
  // In a process of its own: the table's limit is process-wide.
  const script = `
    import { startSession } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
    import { nativeSampler } from ${JSON.stringify(new URL('../dist/providers/cpu-sampler/native-route.js', import.meta.url).href)};
    const session = await startSession({ providers: 'Runtime.CpuSampler:*:4:IntervalUs=200', output: ${JSON.stringify(join(await tempDir(t), 'full.tptrace'))} });
    // Code made at run time: every function a new frame (a template engine, say).
    const made = (i) => new Function('ms', 'return (function made' + i + '() { let x = 0; for (const end = Date.now() + ms; Date.now() < end; ) x++; return x; })(ms)');
    const run = async (from, to) => { for (let i = from; i < to; i++) { made(i)(4); if (i % 10 === 0) await new Promise((r) => setTimeout(r, 1)); } };
    await run(0, 20);
    let frames = 0, stacks = 0, lost = 0;
    const count = () => { const t = nativeSampler.take(0, frames, stacks); frames += t.frames.length / 4; stacks += t.stackDefs.length / 2; lost += t.lostTableFull; };
    nativeSampler.rotate(true);
    count();
    nativeSampler.limitStacks(stacks + 10);
    const before = { frames, stacks };
    await run(20, 320);
    nativeSampler.rotate(true);
    count();
    await session.stop();
    console.log(JSON.stringify({ addedFrames: frames - before.frames, addedStacks: stacks - before.stacks, lost }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1));
  assert.ok(r.lost > 0, `samples lost to the full table: ${JSON.stringify(r)}`);
  assert.ok(r.addedStacks <= 10, JSON.stringify(r));
  // Frames come with the stacks that use them: at most one per stack added.
  assert.ok(r.addedFrames <= 10, `frames added once the table was full: ${JSON.stringify(r)}`);
});
