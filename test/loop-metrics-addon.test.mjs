// The loop-metrics addon (native/gc-hook/loop_metrics.cc): the main thread's libuv idle time read from
// another thread. Ground truth is Node's own eventLoopUtilization() on the main thread (the same libuv
// counter through Node's binding): a worker's readings while the main loop sleeps lie between the
// main thread's before and after, and grow; while the main thread is blocked they stand still at
// exactly what Node reads there, and say the loop is out of its poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { loopMetricsMissing } from '../dist/providers/event-loop/loop-idle-rest.js';
import { mainRestRoute } from '../dist/providers/event-loop/rest-clock.js';

const addonOff = process.env.TRACEPIPE_GC_HOOK === '0';
assert.equal(loopMetricsMissing, undefined, `the loop-metrics addon did not load (${loopMetricsMissing}); build it with npm run install, or set TRACEPIPE_GC_HOOK=0 to test without it`);
const skip = addonOff && 'the native addon is turned off (TRACEPIPE_GC_HOOK=0)';
const addonPath = createRequire(import.meta.url).resolve('../native/gc-hook/build/Release/loop_metrics.node');

test('the main thread\'s rest is told by its loop\'s idle time with the addon, by its schedstat without', () => {
  assert.equal(mainRestRoute(), addonOff ? 'schedstat' : 'loop-idle');
});

// Commands the main thread gives the worker through shared memory (the main thread may be blocked).
const CMD = 0;
const DONE = 1;
const READ_TWICE = 1;
/** A bound on every wait: a wait never lasts forever, and a missed step fails the test. */
const WAIT_BOUND_MS = 20_000;

/** A worker that, on each command, takes two readings 50 ms apart into `readings` (idleMs, atMs, inPoll; twice). */
const workerSource = `
const { workerData } = require('node:worker_threads');
const addon = require(workerData.addonPath);
const ctl = new Int32Array(workerData.ctl);
const readings = new Float64Array(workerData.readings);
const out = new Float64Array(3);
addon.bind(out);
const pause = new Int32Array(new SharedArrayBuffer(4));
for (let round = 1; ; round++) {
  if (Atomics.wait(ctl, 0, round - 1, ${WAIT_BOUND_MS}) === 'timed-out' && Atomics.load(ctl, 0) < round) break;
  if (Atomics.load(ctl, 0) < 0) break;
  for (let k = 0; k < 2; k++) {
    if (!addon.read()) throw new Error('no loop is watched');
    readings.set(out, k * 3);
    if (k === 0) Atomics.wait(pause, 0, 0, 50);
  }
  Atomics.store(ctl, 1, round);
  Atomics.notify(ctl, 1);
}
`;

test('idle time read from a worker grows while the main loop sleeps, stands still while it is blocked', { skip, timeout: 60_000 }, async () => {
  const addon = createRequire(import.meta.url)(addonPath);
  assert.throws(() => addon.bind({}), TypeError);
  assert.throws(() => addon.bind(new Float64Array(2)), TypeError);
  addon.watchThisLoop();
  const ctl = new Int32Array(new SharedArrayBuffer(8));
  const readings = new Float64Array(new SharedArrayBuffer(6 * 8));
  const worker = new Worker(workerSource, { eval: true, workerData: { addonPath, ctl: ctl.buffer, readings: readings.buffer } });
  const exited = once(worker, 'exit');
  try {
    const ask = (round) => {
      Atomics.store(ctl, CMD, round);
      Atomics.notify(ctl, CMD);
    };
    const answered = (round) => Atomics.load(ctl, DONE) >= round;

    // 1. Asleep: the main loop waits in its poll (a timer) while the worker reads it.
    const idleBefore = performance.eventLoopUtilization().idle;
    ask(1);
    const deadline = performance.now() + WAIT_BOUND_MS;
    while (!answered(1)) {
      assert.ok(performance.now() < deadline, 'the worker answered');
      await new Promise((r) => setTimeout(r, 20));
    }
    const idleAfter = performance.eventLoopUtilization().idle;
    const [i1, at1, poll1, i2, at2, poll2] = readings;
    assert.ok(idleBefore <= i1 && i1 < i2 && i2 <= idleAfter, `idle ${idleBefore} <= ${i1} < ${i2} <= ${idleAfter}`);
    assert.ok(i2 - i1 <= at2 - at1 + 1e-3, 'no more idle time than time passed');
    assert.ok(poll1 === 1 || poll2 === 1, 'seen in its poll');

    // 2. Blocked: this callback holds the main thread (out of its poll) until the worker has read twice.
    const idleBlocked = performance.eventLoopUtilization().idle;
    ask(2);
    const blockDeadline = performance.now() + WAIT_BOUND_MS;
    while (!answered(2)) assert.ok(performance.now() < blockDeadline, 'the worker answered while the main thread was blocked');
    const [b1, , bPoll1, b2, , bPoll2] = readings;
    assert.equal(b1, b2, 'idle time stands still while the loop is blocked');
    assert.ok(Math.abs(b1 - idleBlocked) < 1e-6, `the worker reads what Node reads here: ${b1} vs ${idleBlocked}`);
    assert.deepEqual([bPoll1, bPoll2], [0, 0], 'out of its poll');
  } finally {
    Atomics.store(ctl, CMD, -1);
    Atomics.notify(ctl, CMD);
    await exited;
  }
});

// The heartbeat's layout (src/providers/event-loop/heartbeat.ts): Int32 words, then Float64s.
const WAKE = 3;
const RESTING = 6;
const POLLS = 9;
const REST_SINCE_MS = 10;
const REST_IDLE_MS = 14;

/** A worker that sleeps in sleepWhileResting(0, pollMs, maxMs, tailMs) on `heartbeat`, then says so in `done[0]` and what `blocked[0]` was then in `done[1]`. */
function sleeper(heartbeat, done, args) {
  const source = `
const { workerData } = require('node:worker_threads');
const addon = require(workerData.addonPath);
addon.watchHeartbeat(workerData.heartbeat);
const done = new Int32Array(workerData.done);
addon.sleepWhileResting(0, ...workerData.args);
Atomics.store(done, 1, Atomics.load(new Int32Array(workerData.heartbeat), 15));
Atomics.store(done, 0, 1);
`;
  const worker = new Worker(source, { eval: true, workerData: { addonPath, heartbeat, done: done.buffer, args } });
  return once(worker, 'exit');
}

/** Bounded wait (this thread out of its poll) until the worker is done. */
function blockUntilDone(done) {
  const deadline = performance.now() + WAIT_BOUND_MS;
  while (Atomics.load(done, 0) === 0) assert.ok(performance.now() < deadline, 'the worker came back from sleepWhileResting');
}

test('sleepWhileResting: back when the watched loop leaves its rest, when the wake count moves, or after its bound; each poll counted', { skip, timeout: 60_000 }, async () => {
  const addon = createRequire(import.meta.url)(addonPath);
  addon.watchThisLoop();
  const out = new Float64Array(3);
  addon.bind(out);
  const sab = new SharedArrayBuffer(120);
  const i32 = new Int32Array(sab);
  const f64 = new Float64Array(sab);
  // Word 15 (unused by the heartbeat) says here whether this thread is blocked.
  const BLOCKED = 15;
  /** The baseline as the resting thread leaves it: read in a callback, so out of the poll. */
  const rest = () => {
    assert.ok(addon.read());
    f64[REST_SINCE_MS] = out[1];
    f64[REST_IDLE_MS] = out[0];
    Atomics.store(i32, RESTING, 1);
  };

  // 1. Leaves its rest: this thread blocks (no poll) until the worker comes back. A tail of 50 ms
  // keeps this test's own short turns from counting as a wake on a busy machine.
  rest();
  let done = new Int32Array(new SharedArrayBuffer(8));
  let exited = sleeper(sab, done, [10, WAIT_BOUND_MS, 50]);
  await new Promise((r) => setTimeout(r, 200));
  Atomics.store(i32, BLOCKED, 1);
  blockUntilDone(done);
  Atomics.store(i32, BLOCKED, 0);
  await exited;
  assert.equal(done[1], 1, 'it came back while this thread was blocked, not before');
  assert.ok(Atomics.load(i32, POLLS) >= 1, 'its polls are counted');

  // 2. The wake count moves (a stop, a new setting): back within a poll, though the loop still rests.
  rest();
  done = new Int32Array(new SharedArrayBuffer(8));
  exited = sleeper(sab, done, [10, WAIT_BOUND_MS, 1e9]);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(Atomics.load(done, 0), 0, 'still asleep while nothing changed');
  Atomics.add(i32, WAKE, 1);
  await exited;
  assert.equal(done[0], 1);

  // 3. No news: back after its bound, having polled through it.
  Atomics.store(i32, WAKE, 0);
  Atomics.store(i32, POLLS, 0);
  rest();
  done = new Int32Array(new SharedArrayBuffer(8));
  await sleeper(sab, done, [10, 100, 1e9]);
  assert.equal(done[0], 1);
  assert.equal(Atomics.load(i32, POLLS), 10, 'one poll every 10 ms of its 100 ms');
});

test('the turn meter calls back once, as the first turn with work past its threshold ends, with the work\'s length (idle time in the poll not counted, a discount leaves out that much of the turn and no more); disarmed, it is silent, and it keeps no process alive', { skip, timeout: 60_000 }, async () => {
  const addon = createRequire(import.meta.url)(addonPath);
  const block = (ms) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const calls = [];
  const arm = () => addon.armTurnMeter(20, (workMs) => calls.push({ workMs, at: performance.now() }));
  arm();
  // Idle turns (the poll's wait) and short ones are not work past 20 ms.
  await sleep(150);
  setTimeout(() => block(5), 10);
  await sleep(100);
  assert.deepEqual(calls, []);
  // The meter times the work of the turn: this timer's 60 ms (and a few ms of Node's around it).
  let blockedAt = 0;
  setTimeout(() => {
    blockedAt = performance.now();
    block(60);
  }, 10);
  await sleep(200);
  assert.equal(calls.length, 1, 'one call');
  // No more than the turn's time from the block on (and its start, a timer's dispatch, before it).
  assert.ok(calls[0].workMs >= 60 && calls[0].workMs <= calls[0].at - blockedAt + 50, `the turn's work: ${calls[0].workMs} ms, ${calls[0].at - blockedAt} ms from the block to the call`);
  assert.ok(calls[0].at >= blockedAt + 60, 'called as the turn ended');
  // Once: a second block calls nothing until armed again.
  setTimeout(() => block(40), 10);
  await sleep(100);
  assert.equal(calls.length, 1, 'called once');
  arm();
  // A discount leaves that much of the turn out, and no more: 30 ms less 25, then 5 ms, is 10 ms of work…
  setTimeout(() => {
    block(30);
    addon.discountTurnMeter(25);
    block(5);
  }, 10);
  await sleep(100);
  assert.equal(calls.length, 1, 'a discounted turn under the threshold is not work past it');
  // …and 40 ms less 5 is 35.
  setTimeout(() => {
    blockedAt = performance.now();
    block(40);
    addon.discountTurnMeter(5);
  }, 10);
  await sleep(100);
  assert.equal(calls.length, 2, 'the work before a discount counts');
  assert.ok(calls[1].workMs >= 35 && calls[1].workMs <= calls[1].at - blockedAt + 50, `the turn's work less the discount: ${calls[1].workMs} ms`);
  arm();
  addon.disarmTurnMeter();
  setTimeout(() => block(40), 10);
  await sleep(100);
  assert.equal(calls.length, 2, 'a disarmed meter is silent');
  for (const bad of [-1, Infinity, NaN, 1e20]) assert.throws(() => addon.armTurnMeter(bad, () => {}), /armTurnMeter needs/);
  assert.throws(() => addon.armTurnMeter(5), /armTurnMeter needs/);
  assert.throws(() => addon.discountTurnMeter(Infinity), /discountTurnMeter needs/);
  // An armed meter is unref'd: a thread with nothing else to do ends, and the meter closes with it
  // before Node unloads the addon: in a process whose main thread never loaded the addon (this test's
  // has, which kept the library mapped), a worker that armed it once, or that has it armed as it ends
  // or is terminated, leaves the process to exit as it would (the close callback is the addon's code).
  const source = `
    const { Worker } = require('node:worker_threads');
    const arm = 'const a = require(${JSON.stringify(addonPath)}); a.armTurnMeter(1, () => {});';
    const run = (code) => new Promise((done) => new Worker(code, { eval: true }).on('exit', done));
    (async () => {
      await run(arm);
      await run(arm + ' a.disarmTurnMeter();');
      const w = new Worker(arm + ' setInterval(() => {}, 1000);', { eval: true });
      setTimeout(() => w.terminate(), 200);
      await new Promise((done) => w.on('exit', done));
      process.exitCode = 7;
    })();`;
  const child = spawn(process.execPath, ['-e', source], { stdio: 'ignore' });
  const [code, signal] = await Promise.race([once(child, 'exit'), sleep(WAIT_BOUND_MS).then(() => ['still running', null])]);
  assert.deepEqual([code, signal], [7, null]);
});
