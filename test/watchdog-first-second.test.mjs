// The stall watchdog's thread starts once the process has run for a second after its first session
// asked for it: a program that ends sooner starts no isolate for it. Until then the main thread
// watches its own loop, and a stretch that kept it from turning is still a stall in the trace, timed
// from the last turn: checked against the blocked stretch the program timed itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const REGISTER = new URL('../dist/register.js', import.meta.url).href;

/** Busy for `ms`, then prints how long it was busy by its own clock (the stretch's lower bound). */
const block = (ms) => `{ const t0 = process.hrtime.bigint(); while (process.hrtime.bigint() - t0 < ${ms}_000_000n); process.stdout.write('blocked ' + Number(process.hrtime.bigint() - t0) / 1e6 + '\\n'); }`;

/** `code` run by `node -e` under a startup session of the default profile: its exit code, the ms it timed itself, and the trace's events. */
async function traced(t, code) {
  const file = join(await tempDir(t), 'startup.tptrace');
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file };
  delete env.TRACEPIPE_PROVIDERS;
  const r = await promisify(execFile)(process.execPath, [`--import=${REGISTER}`, '-e', code], { env, timeout: 60_000 }).catch((e) => e);
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  const blocked = [...String(r.stdout).matchAll(/^blocked (\S+)$/gm)].map((m) => Number(m[1]));
  return { code: r.code ?? 0, blocked, events, stalls: events.filter((e) => e.provider === 'Runtime.EventLoop' && e.name.startsWith('Stall')) };
}

const watchdogThreads = (events) => events.filter((e) => e.name === 'Thread' && e.fields.role === 'tracepipe-watchdog');

test('a process that ends within a second of its startup session starts no watchdog thread; one that lives on gets one', { timeout: 120_000 }, async (t) => {
  const short = await traced(t, '0');
  assert.equal(short.code, 0);
  assert.ok(short.events.some((e) => e.name === 'Thread' && e.fields.role === 'main'), 'the rundown names the threads');
  assert.deepEqual(watchdogThreads(short.events), []);
  assert.deepEqual(short.stalls, []);
  const long = await traced(t, 'setTimeout(() => {}, 1500)');
  assert.equal(watchdogThreads(long.events).length, 1, 'the watchdog thread, as the rundown names it');
  assert.deepEqual(long.stalls, [], 'a loop that turned freely has no stall');
});

test('a stretch blocked from the start is a stall once it ends, from its StallStart to its StallEnd, at least as long as the program timed it', { timeout: 120_000 }, async (t) => {
  // The timer turns the loop once the stretch is over (whether it turns at the end of a program
  // with nothing left to do is Node's business: Node 20 does after an --import, Node 24 does not).
  const r = await traced(t, `${block(600)} setTimeout(() => {}, 20)`);
  assert.equal(r.code, 0);
  assert.deepEqual(r.stalls.map((e) => e.name), ['StallStart', 'StallEnd']);
  const [start, end] = r.stalls;
  assert.equal(start.fields.thread, 0);
  assert.ok(start.fields.blockedMs >= r.blocked[0], `${start.fields.blockedMs} ms blocked, the program timed ${r.blocked[0]} ms`);
  assert.equal(end.fields.durationMs, start.fields.blockedMs);
});

test('a process that exits inside a stretch blocked from the start keeps its exit code, and the stall never ends in the trace', { timeout: 120_000 }, async (t) => {
  const r = await traced(t, `${block(600)} process.exit(3)`);
  assert.equal(r.code, 3);
  assert.deepEqual(r.stalls.map((e) => e.name), ['StallStart']);
  assert.ok(r.stalls[0].fields.blockedMs >= r.blocked[0], `${r.stalls[0].fields.blockedMs} ms blocked, the program timed ${r.blocked[0]} ms`);
});

test('a stall that begins after the loop turned is timed from that turn, not from the start', { timeout: 120_000 }, async (t) => {
  const r = await traced(t, `setTimeout(() => ${block(600)}, 400); setTimeout(() => {}, 1200)`);
  assert.deepEqual(r.stalls.map((e) => e.name), ['StallStart', 'StallEnd']);
  const blockedMs = r.stalls[0].fields.blockedMs;
  assert.ok(blockedMs >= r.blocked[0], `${blockedMs} ms blocked, the program timed ${r.blocked[0]} ms`);
  // Timed from the session's start instead, it would hold the 400 ms before the timer too.
  assert.ok(blockedMs < r.blocked[0] + 400, `${blockedMs} ms blocked, the program timed ${r.blocked[0]} ms after a 400 ms wait`);
});

test('a session stopped inside a stretch blocked since it started holds the stall as begun', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'stopped.tptrace');
  const session = await startSession({ providers: 'Runtime.EventLoop', output: file });
  const t0 = process.hrtime.bigint();
  while (process.hrtime.bigint() - t0 < 400_000_000n);
  const timedMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await session.stop();
  const stalls = [];
  for await (const e of readTrace(file)) if (e.name.startsWith('Stall')) stalls.push(e);
  assert.deepEqual(stalls.map((e) => e.name), ['StallStart']);
  assert.ok(stalls[0].fields.blockedMs >= timedMs, `${stalls[0].fields.blockedMs} ms blocked, timed ${timedMs} ms`);
});

test('a stall across the thread\'s start a second in is reported once, and the loop\'s Delay holds it', { timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'handoff.tptrace');
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file, TRACEPIPE_PROVIDERS: 'Runtime.EventLoop:*:5:IntervalSec=0.5' };
  // One block begins before the handoff and ends after it; another, well inside the first second.
  const code = `setTimeout(() => ${block(300)}, 200); setTimeout(() => ${block(600)}, 950); setTimeout(() => {}, 2500)`;
  const r = await promisify(execFile)(process.execPath, [`--import=${REGISTER}`, '-e', code], { env, timeout: 60_000 });
  const timed = [...r.stdout.matchAll(/^blocked (\S+)$/gm)].map((m) => Number(m[1]));
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  const stalls = events.filter((e) => e.name.startsWith('Stall'));
  assert.deepEqual(stalls.map((e) => e.name), ['StallStart', 'StallEnd', 'StallStart', 'StallEnd'], JSON.stringify(stalls.map((e) => [e.name, e.fields])));
  stalls.filter((e) => e.name === 'StallStart').forEach((e, i) => assert.ok(e.fields.blockedMs >= timed[i], `stall ${i}: ${e.fields.blockedMs} ms blocked, the program timed ${timed[i]} ms`));
  // The loop sampler is not left resting for a ring nobody sends: the first block is in Delay.
  const maxDelay = Math.max(...events.filter((e) => e.name === 'Delay').map((e) => e.fields.maxMs));
  assert.ok(maxDelay >= timed[0], `Delay's largest maxMs ${maxDelay} ms, blocks the program timed: ${timed.join(', ')} ms`);
});

test('a session that wants CPU samples during stalls, started inside the first second, keeps the stretch under way', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'first.tptrace');
  const second = join(dir, 'second.tptrace');
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file, TRACEPIPE_PROVIDERS: 'Runtime.EventLoop' };
  const code = `
    const tp = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
    await new Promise((r) => setTimeout(r, 200));
    const started = tp.startSession({ providers: 'Runtime.CpuSampler', output: ${JSON.stringify(second)} });
    ${block(600)}
    const s = await started;
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();`;
  const r = await promisify(execFile)(process.execPath, [`--import=${REGISTER}`, '--input-type=module', '-e', code], { env, timeout: 60_000 });
  const timed = Number(/^blocked (\S+)$/m.exec(r.stdout)[1]);
  const stalls = [];
  for await (const e of readTrace(file)) if (e.name.startsWith('Stall')) stalls.push(e);
  assert.deepEqual(stalls.map((e) => e.name), ['StallStart', 'StallEnd']);
  assert.ok(stalls[0].fields.blockedMs >= timed, `${stalls[0].fields.blockedMs} ms blocked, the program timed ${timed} ms`);
});

/** Node's permission model: --permission since Node 23.5, --experimental-permission before. */
const PERMISSION = ['--permission', '--experimental-permission'].find((f) => process.allowedNodeEnvironmentFlags.has(f));

test('a watchdog thread that cannot start is a warning, not the application\'s exception', { timeout: 60_000, skip: !PERMISSION && 'this Node has no permission model' }, async (t) => {
  const file = join(await tempDir(t), 'refused.tptrace');
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file };
  delete env.TRACEPIPE_PROVIDERS;
  // Node's permission model without --allow-worker: new Worker() throws.
  const r = await promisify(execFile)(process.execPath, [PERMISSION, '--allow-fs-read=*', '--allow-fs-write=*', '--allow-addons', '--no-warnings', `--import=${REGISTER}`, '-e', "setTimeout(() => console.log('app done'), 1500)"], { env, timeout: 60_000 }).catch((e) => e);
  assert.equal(r.code ?? 0, 0, r.stderr);
  assert.match(r.stdout, /^app done$/m);
});
