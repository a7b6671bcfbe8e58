// Runtime.CpuSampler on real processes, checked against V8's own --cpu-prof: the hot function tops the
// self-time list with about the same share; samples keep coming while the thread never yields, and
// reach the file however the process ends; workers are sampled on their own, tracepipe's threads not.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../dist/index.js';
import { CpuProfileBuilder, frameLabel, functionTimes } from '../dist/analysis/cpu-profile.js';
import { startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/cpu-hot.mjs', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const NATIVE = process.env.TRACEPIPE_GC_HOOK !== '0';
// Where attach finds its targets' sockets: this file's own directory.
const ipcDir = await useTmpdir(after);

async function run(args, { env = {}, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code, signal] = await once(child, 'close');
  return { code, signal, out, err };
}

async function traced(t, args, extraEnv = {}, nodeArgs = []) {
  const file = join(await tempDir(t), 'cpu.tptrace');
  const env = { TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.CpuSampler', TRACEPIPE_OUTPUT: file, ...extraEnv };
  const r = await run(args, { env, nodeArgs: [...nodeArgs, `--import=${REGISTER}`] });
  return { ...r, file };
}

/** The profile of a trace, and the events of the sampler that are not samples or definitions. */
export async function profileOf(file, { allowTruncated = false } = {}) {
  const b = new CpuProfileBuilder();
  const others = [];
  try {
    for await (const e of readTrace(file)) {
      if (b.add(e) && !['Sample', 'Frame', 'Stack'].includes(e.name)) others.push(e);
    }
  } catch (e) {
    if (!allowTruncated || e.code !== 'truncated') throw e;
  }
  return { profile: b.finish(), others };
}

/** Self-time shares (%) by function name over all threads (from `fromNs` to `toNs`): ours. */
function ourShares(profile, threads, fromNs, toNs) {
  const { functions, sampledNs } = functionTimes(profile, threads, fromNs, toNs);
  return functions.map((f) => ({ name: profile.frames[f.frame].functionName, label: frameLabel(profile.frames[f.frame]), share: (100 * f.selfNs) / sampledNs }));
}

/**
 * Self-time shares (%) by function name from a .cpuprofile, V8's own, from the first sample of `name`
 * to its last: while the workload ran (what the process did before, loading tracepipe included, is
 * not the workload's).
 */
function cpuProfShares(profile, name) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const names = profile.samples.map((id) => byId.get(id).callFrame.functionName);
  const self = new Map();
  let total = 0;
  for (let i = names.indexOf(name); i >= 0 && i <= names.lastIndexOf(name); i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    self.set(names[i], (self.get(names[i]) ?? 0) + dt);
    total += dt;
  }
  return [...self].map(([name, us]) => ({ name, share: (100 * us) / total })).sort((a, b) => b.share - a.share);
}

test('a function that never yields tops the self-time list, with the share node --cpu-prof gives within 10 points', { timeout: 120_000 }, async (t) => {
  // The same run under both, so that both profile one execution (on a loaded machine two runs of
  // the workload differ by more than the profilers do).
  const dir = await tempDir(t);
  const r = await traced(t, ['spin', '1500'], {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  assert.equal(r.code, 0, r.err);
  const [name] = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const v8 = cpuProfShares(JSON.parse(await readFile(join(dir, name), 'utf8')), 'hotLoop');
  const { profile, others } = await profileOf(r.file);
  assert.deepEqual([...profile.threads.keys()], [0], 'only the main thread: tracepipe threads are not sampled');
  // The same window as V8's: from the first sample in hotLoop to its last.
  const main = profile.threads.get(0);
  const inHot = [...main.stack.keys()].filter((i) => main.stack[i] >= 0 && profile.frames[profile.stackFrame[main.stack[i]]].functionName === 'hotLoop');
  const ours = ourShares(profile, [main], main.timestampNs[inHot[0]], main.timestampNs[inHot.at(-1)] + 1);
  t.diagnostic(`ours: ${ours.slice(0, 3).map((f) => `${f.label} ${f.share.toFixed(1)} %`).join(', ')}; --cpu-prof: ${v8.slice(0, 3).map((f) => `${f.name} ${f.share.toFixed(1)} %`).join(', ')}`);
  assert.equal(v8[0].name, 'hotLoop', 'V8 agrees on the workload');
  assert.equal(ours[0].name, 'hotLoop');
  assert.match(ours[0].label, /^hotLoop \(cpu-hot\.mjs:\d+\)$/);
  assert.ok(Math.abs(ours[0].share - v8[0].share) <= 10, `hotLoop: ${ours[0].share.toFixed(1)} % traced vs ${v8[0].share.toFixed(1)} % by --cpu-prof`);
  assert.ok(v8[0].share < 90, 'the workload is not all hotLoop: the share means something');
  const side = (list) => list.find((f) => f.name === 'sideLoop')?.share ?? 0;
  assert.ok(Math.abs(side(ours) - side(v8)) <= 10, `sideLoop: ${side(ours).toFixed(1)} % traced vs ${side(v8).toFixed(1)} % by --cpu-prof`);
  assert.equal(profile.unresolvedSamples, 0);
  assert.deepEqual(profile.lost, {});
  const started = others.find((e) => e.name === 'SamplerStarted');
  assert.deepEqual({ ...started.fields }, { thread: 0, intervalUs: 1000, route: NATIVE ? 'native' : 'inspector' });
  assert.ok(others.some((e) => e.name === 'SamplerStopped'));
});

test('samples arrive while the thread never yields: the watchdog writes them during the stall, and process.exit keeps the last ones', { timeout: 120_000, skip: !NATIVE && 'the inspector fallback writes only when the loop turns' }, async (t) => {
  const r = await traced(t, ['exit', '1500']);
  assert.equal(r.code, 0, r.err);
  const writers = new Map();
  let lastSampleNs = 0;
  let stoppedNs = 0;
  for await (const e of readTrace(r.file)) {
    if (e.provider !== 'Runtime.CpuSampler') continue;
    if (e.name === 'Sample') {
      writers.set(e.threadId, (writers.get(e.threadId) ?? 0) + 1);
      lastSampleNs = Math.max(lastSampleNs, e.timestampNs);
    }
    if (e.name === 'SamplerStopped') stoppedNs = e.timestampNs;
  }
  assert.ok(writers.size >= 2, `the main thread and its watchdog both wrote samples: ${JSON.stringify([...writers])}`);
  assert.ok(stoppedNs > 0, 'sampling stopped as the process exited');
  // The last rotation before exit is at most one period (100 ms) before it; allow for a loaded machine.
  assert.ok(stoppedNs - lastSampleNs < 500e6, `the last sample is ${(stoppedNs - lastSampleNs) / 1e6} ms before the end`);
  const { profile } = await profileOf(r.file);
  assert.equal(ourShares(profile)[0].name, 'hotLoop');
});

test('workers that import tracepipe are sampled on their own threads, one of them terminated while it spins', { timeout: 120_000 }, async (t) => {
  const r = await traced(t, ['worker', '600']);
  assert.equal(r.code, 0, r.err);
  const { profile } = await profileOf(r.file);
  assert.equal(profile.unresolvedSamples, 0);
  // The inspector fallback writes when the thread's loop turns: the terminated worker's never did.
  const threads = [...profile.threads.keys()].filter((id) => profile.threads.get(id).timestampNs.length > 0).sort((a, b) => a - b);
  assert.equal(threads.length, NATIVE ? 3 : 2, `the main thread and the workers: ${threads}`);
  assert.equal(threads[0], 0);
  assert.ok(ourShares(profile, [profile.threads.get(0)]).some((f) => f.name === 'mainLoop' && f.share > 10), 'the main thread spins in mainLoop');
  for (const worker of threads.slice(1)) assert.equal(ourShares(profile, [profile.threads.get(worker)])[0].name, 'workerLoop', `thread ${worker}`);
});

test('a profiler that stops sampling while the thread runs is replaced, and the loss is counted', { timeout: 120_000, skip: !NATIVE && 'the native sampler only' }, async (t) => {
  const r = await traced(t, ['stuck', '4000']);
  assert.equal(r.code, 0, r.err);
  const { profile, others } = await profileOf(r.file);
  const restarts = others.filter((e) => e.name === 'SamplerRestarted');
  assert.equal(restarts.length, 1, 'one restart');
  assert.match(restarts[0].fields.reason, /^no sample in \d+ ms while the thread used \d+ ms of CPU$/);
  assert.ok(profile.lost['profiler-restart'] > 0, 'the samples it missed are counted');
  const samples = profile.threads.get(0);
  assert.ok(samples.timestampNs.some((ts) => ts > restarts[0].timestampNs), 'samples come again after the restart');
  // V8 logs a loop's on-stack-replaced code without its function's name to a profiler created while
  // the loop runs: the replacement's samples show as an unnamed frame of the script (docs/PROVIDERS.md).
  assert.match(ourShares(profile)[0].label, /cpu-hot\.mjs/);
});

test('a flight recorder dump after an uncaught exception holds the samples of the last moments, resolved', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const r = await run(['crash', '1200', dir]);
  assert.equal(r.code, 1);
  assert.match(r.err, /the end of cpu-hot/);
  const [dump] = (await readdir(dir)).filter((f) => f.startsWith('tracepipe-flight-'));
  assert.ok(dump, `a crash dump in ${dir}: ${r.err}`);
  const { profile } = await profileOf(join(dir, dump));
  const main = profile.threads.get(0);
  assert.ok(main && main.timestampNs.length > 100, `samples in the dump: ${main?.timestampNs.length}`);
  assert.equal(profile.unresolvedSamples, 0);
  assert.equal(ourShares(profile)[0].name, 'hotLoop');
});

test('a flight recorder dump on its signal holds the samples up to the signal, on the fallback route too (which writes once a second)', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  for (const route of NATIVE ? ['native', 'inspector'] : ['inspector']) {
    const r = await run(['signal', '600', dir], { env: route === 'inspector' ? { TRACEPIPE_GC_HOOK: '0' } : {} });
    assert.equal(r.code, 0, r.err);
    const { profile } = await profileOf(r.out.trim());
    const main = profile.threads.get(0);
    const hot = [...(main?.stack ?? [])].filter((s) => s >= 0 && profile.frames[profile.stackFrame[s]].functionName === 'hotLoop').length;
    assert.ok(hot > 20, `${route}: ${hot} samples of hotLoop in the dump`);
  }
});

test('collect --pid on a process that stalls 300 ms at a time: the stalls are spent in the function that causes them, even in a file cut short by SIGKILL of the tool', { timeout: 120_000 }, async (t) => {
  // Ready at start-up (TRACEPIPE_CPU_READY=1): the attach starts warm, and names the stall's function
  // though V8 inlined it into Node's timer loop before the attach (docs/PROVIDERS.md).
  const target = await startTarget(t, ipcDir, { script: FIXTURE, args: ['stall'], env: { TRACEPIPE_CPU_READY: '1' } });
  const file = join(ipcDir, 'attached.tptrace');
  const cli = startCli(t, ipcDir, ['collect', '--pid', String(target.pid), '--providers', 'Runtime.CpuSampler,Runtime.EventLoop', '-o', file]);
  // Written as they come: enough for several stalls, then the tool dies without a word.
  await waitFor('samples of several stalls in the file', async () => (await stat(file).catch(() => ({ size: 0 }))).size > 80_000, 60_000);
  cli.child.kill('SIGKILL');
  await cli.done;
  const stalls = [];
  let begun;
  const b = new CpuProfileBuilder();
  try {
    for await (const e of readTrace(file)) {
      b.add(e);
      if (e.provider !== 'Runtime.EventLoop' || e.fields.thread !== 0) continue;
      if (e.name === 'StallStart') begun = e.timestampNs - e.fields.blockedMs * 1e6;
      if (e.name === 'StallEnd' && begun !== undefined) stalls.push([begun, e.timestampNs]);
    }
  } catch (e) {
    assert.equal(e.code, 'truncated', String(e));
  }
  const profile = b.finish();
  // Samples reach the file up to a rotation (a second) after they were taken: the stalls that ended
  // before the file's last sample are those whose samples it must hold.
  const lastSample = profile.threads.get(0).timestampNs.reduce((max, ts) => Math.max(max, ts), 0);
  const covered = stalls.slice(1).filter(([, to]) => to <= lastSample);
  assert.ok(covered.length >= 2, `stalls in the file: ${stalls.length}, ended before its last sample: ${covered.length + 1}`);
  // The first stall may hold the session's own start on the main thread (loading what it needs). On
  // a loaded machine the watchdog can also take a loop that got no CPU for a stall: most stalls, and
  // all of them together, must be spent in stallMaker.
  const tops = [];
  for (const [from, to] of covered) {
    const { functions, sampledNs } = functionTimes(profile, [profile.threads.get(0)], from, to);
    assert.ok(functions.length > 0, `samples during the stall at ${from / 1e6} ms`);
    const top = profile.frames[functions[0].frame];
    tops.push(`${(from / 1e6).toFixed(0)} ms: ${frameLabel(top)} ${((100 * functions[0].selfNs) / sampledNs).toFixed(0)} %`);
  }
  t.diagnostic(tops.join('; '));
  // The fallback's profiler starts cold at every rotation: a function V8 inlined shows as its caller.
  if (!NATIVE) return;
  const named = tops.filter((line) => / stallMaker \(/.test(line)).length;
  assert.ok(named >= Math.ceil(tops.length * 0.75), `stallMaker tops ${named} of ${tops.length} stalls`);
  const inStalls = new Map();
  for (const [from, to] of covered) {
    for (const f of functionTimes(profile, [profile.threads.get(0)], from, to).functions) inStalls.set(f.frame, (inStalls.get(f.frame) ?? 0) + f.selfNs);
  }
  const [topFrame] = [...inStalls].sort((a, b) => b[1] - a[1])[0];
  assert.equal(profile.frames[topFrame].functionName, 'stallMaker', 'all the stalls together');
});

test('from code: a session started with startSession samples this thread, and stops with the session', { timeout: 120_000 }, async (t) => {
  const { startSession } = await import('../dist/index.js');
  const file = join(await tempDir(t), 'in-process.tptrace');
  const session = await startSession({ providers: 'Runtime.CpuSampler:*:4:IntervalUs=500', output: file });
  const spinHere = (ms) => {
    let x = 0;
    for (const end = Date.now() + ms; Date.now() < end; ) for (let i = 0; i < 100_000; i++) x = (x * 48271) % 2147483647;
    return x;
  };
  // Long enough to outweigh the session's own start and stop in wall time (samples are weighted by
  // it), which take longer on a loaded machine: a 400 ms spin came out under 30 % beside two suites.
  spinHere(1200);
  await session.stop();
  const { profile, others } = await profileOf(file);
  assert.deepEqual([...profile.threads.keys()], [0]);
  assert.ok(ourShares(profile).some((f) => f.name === 'spinHere' && f.share > 30), 'the spin is in the samples');
  assert.deepEqual(others.filter((e) => e.name !== 'SamplesLost').map((e) => [e.name, e.fields.intervalUs]), [['SamplerStarted', 500], ['SamplerStopped', undefined]]);
  // Stopped with the session: nothing samples this thread any more.
  const { nativeSampler } = await import('../dist/providers/cpu-sampler/native-route.js');
  if (NATIVE) assert.equal(nativeSampler.take(0, 0, 0), undefined, 'the thread is no longer sampled');
});

test('collect --profile cpu -- CMD: samples with GC pauses and the event loop, on one timeline', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'profile-cpu.tptrace');
  const r = await startCli(t, dir, ['collect', '--profile', 'cpu', '-o', file, '--', process.execPath, FIXTURE, 'spin', '800']).done;
  assert.equal(r.code, 0, r.stderr);
  const summary = await readTrace(file).summary();
  assert.equal(summary.complete, true);
  const providers = new Set(Object.keys(summary.byEvent).map((k) => k.split('/')[0]));
  for (const p of ['Runtime.CpuSampler', 'Runtime.GC', 'Runtime.EventLoop', 'Runtime.Process']) assert.ok(providers.has(p), `${p} in ${[...providers]}`);
  const { profile } = await profileOf(file);
  assert.equal(ourShares(profile)[0].name, 'hotLoop');
});
