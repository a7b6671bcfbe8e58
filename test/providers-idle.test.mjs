// What an always-on session costs while the process does nothing, counted (drain passes, beats,
// doorbell rings), never timed; and that resting costs nothing in what stalls report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findProfile, readTrace, startSession } from '../dist/index.js';
import { Ctl } from '../dist/buffers/session-memory.js';
import { mainRestRoute } from '../dist/providers/event-loop/rest-clock.js';
import { watchdogCounters } from '../dist/providers/event-loop/stall-watchdog.js';
import { loopSamplerState, restsWithoutWatchdog, runOwnTimer } from '../dist/providers/event-loop/loop-sampler.js';
import { liveWorkers } from '../dist/providers/live-workers.js';
import { workerRole } from '../dist/session/service-workers.js';
import { tempDir } from './helpers/temp-dir.mjs';

// These watch the watchdog's thread: from each session's start, not a second in (test/watchdog-first-second.test.mjs).
process.env.TRACEPIPE_WATCHDOG_AFTER_MS = '0';

// The loop sampler rests only where something tells it that its loop woke: the native addon's turn
// meter, or a watchdog that reads the main thread's rest, through the addon (its loop's idle time) or
// (TRACEPIPE_GC_HOOK=0, .ci/run runs this file both ways) its schedstat.
const canRest = mainRestRoute() === 'loop-idle' || existsSync(`/proc/self/task/${process.pid}/schedstat`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Whether the main thread's sampler rests now: the watchdog's view where one runs, the sampler's own otherwise. */
const resting = () => (watchdogCounters() ? watchdogCounters().resting : loopSamplerState()?.resting);

async function eventsOf(file) {
  const out = [];
  for await (const e of readTrace(file)) out.push(e);
  return out;
}

/**
 * Waits until the main thread's sampler rests, then lets one quiet stretch pass: the block that
 * follows begins in a turn of its own, not in the turn where the sampler took its last CPU reading
 * (the one case resting does not see, docs/PROVIDERS.md).
 */
async function settledAtRest() {
  // On a loaded machine a turn of this test's own can take a millisecond of loop time and wake the
  // sampler: then it rests again a few periods later, and the quiet stretch starts over (bounded).
  const deadline = performance.now() + 20_000;
  for (;;) {
    assert.ok(await eventually(resting), 'the sampler rests');
    await sleep(300);
    if (resting()) return;
    assert.ok(performance.now() < deadline, 'and stays at rest for a quiet stretch');
  }
}

/** Waits (bounded) until `check()` holds; false if it never did. */
async function eventually(check, ms = 20_000) {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

function blockFor(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('an idle process with the default profile: the sampler rests, the drain sleeps, the watchdog rings only for real wakes', { timeout: 60_000, skip: !canRest && 'neither the addon nor /proc schedstat here: the sampler never rests' }, async (t) => {
  const dir = await tempDir(t);
  const session = await startSession({ providers: findProfile('default').providers, output: join(dir, 'idle.tptrace') });
  t.after(() => session.stop());
  assert.ok(await eventually(() => watchdogCounters()?.resting), 'the main thread\'s sampler rests once the loop is idle');
  const seconds = 3;
  const before = watchdogCounters();
  const passesBefore = session.memory.drainPasses;
  // Idle, but for this test's own timer: one wake at the end.
  await sleep(seconds * 1000);
  const after = watchdogCounters();
  const passes = session.memory.drainPasses - passesBefore;
  const counts = { beats: after.beats - before.beats, rings: after.rings - before.rings, polls: after.polls - before.polls, passes };
  // Before resting existed: a beat every 10 ms (300 here) and a drain pass every 100 ms (30). Now the
  // thread wakes for the 1 s providers' tick (which wakes neither the drain nor the watchdog's
  // doorbell), and for this test's timer.
  assert.ok(counts.beats <= 10 * seconds, `beats while idle: ${JSON.stringify(counts)}`);
  assert.ok(counts.rings <= 3 * seconds, `doorbell rings while idle: ${JSON.stringify(counts)}`);
  assert.ok(counts.passes <= 4 * seconds, `drain passes while idle: ${JSON.stringify(counts)}`);
  // The watchdog still looks: that is what the stall tests below rely on.
  assert.ok(counts.polls >= seconds, `the watchdog polls the resting thread: ${JSON.stringify(counts)}`);
});

test('a stall that begins while the loop rests is reported while it lasts, at least as long as the block', { timeout: 60_000, skip: !canRest && 'neither the addon nor /proc schedstat here: the sampler never rests' }, async (t) => {
  const file = join(await tempDir(t), 'stall.tptrace');
  const session = await startSession({ providers: 'Runtime.EventLoop:*:5:StallMs=100', output: file });
  const blocks = [];
  // Long enough that a watchdog descheduled for a while on a loaded machine still sees each one while it lasts.
  for (const ms of [700, 500]) {
    await settledAtRest();
    const start = process.hrtime.bigint();
    blockFor(ms);
    blocks.push({ ms, startNs: Number(start - session.originNs), endNs: Number(process.hrtime.bigint() - session.originNs) });
    await sleep(300);
  }
  await session.stop();
  const events = await eventsOf(file);
  const starts = events.filter((e) => e.name === 'StallStart');
  const ends = events.filter((e) => e.name === 'StallEnd');
  const stalls = JSON.stringify(events.filter((e) => e.name.startsWith('Stall')).map((e) => [e.name, e.timestampNs, e.fields]));
  assert.equal(ends.length, starts.length, `every stall ends: ${stalls}`);
  // A loaded machine can stall this test's own loop between the blocks too: each block is matched
  // with the stall reported while it lasted.
  blocks.forEach((b, k) => {
    const during = starts.flatMap((s, i) => (s.timestampNs > b.startNs && s.timestampNs < b.endNs ? [i] : []));
    assert.equal(during.length, 1, `one StallStart written while the ${b.ms} ms block lasted: ${stalls}`);
    const [start, end] = [starts[during[0]], ends[during[0]]];
    assert.ok(start.fields.blockedMs >= 100);
    assert.ok(end.fields.durationMs >= b.ms, `stall ${k}: ${end.fields.durationMs} ms for a ${b.ms} ms block`);
    // Timed from when the thread woke (when its loop left the poll, or its runnable time): not from a beat long before.
    assert.ok(end.fields.durationMs < (b.endNs - b.startNs) / 1e6 + 100, `stall ${k}: ${end.fields.durationMs} ms for ${(b.endNs - b.startNs) / 1e6} ms blocked`);
  });
});

test('a block in a system call (not on the CPU) that begins while the loop rests is still a stall', { timeout: 60_000, skip: !canRest && 'neither the addon nor /proc schedstat here: the sampler never rests' }, async (t) => {
  const file = join(await tempDir(t), 'sleep.tptrace');
  const session = await startSession({ providers: 'Runtime.EventLoop:*:5:StallMs=100', output: file });
  await settledAtRest();
  const start = Number(process.hrtime.bigint() - session.originNs);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
  const end = Number(process.hrtime.bigint() - session.originNs);
  await sleep(300);
  await session.stop();
  const events = await eventsOf(file);
  const stallStart = events.find((e) => e.name === 'StallStart');
  const stallEnd = events.find((e) => e.name === 'StallEnd');
  assert.ok(stallStart && stallEnd, 'the sleeping block is a stall');
  assert.ok(stallStart.timestampNs > start && stallStart.timestampNs < end, 'reported while it lasted');
  // Its start is known to within the watchdog's poll (100 ms) of the thread's wake: the length may fall short by that.
  assert.ok(stallEnd.fields.durationMs > 1000 && stallEnd.fields.durationMs <= (end - start) / 1e6 + 100, `${stallEnd.fields.durationMs} ms for a 1500 ms block`);
  // From its loop's idle time, when the thread left its poll is known: never shorter than the block.
  if (mainRestRoute() === 'loop-idle') assert.ok(stallEnd.fields.durationMs >= (end - start) / 1e6, `${stallEnd.fields.durationMs} ms for ${(end - start) / 1e6} ms blocked`);
});

test('a drain asleep on an idle session is woken by the next chunk a producer takes, not by its time bound', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'wake.tptrace');
  const { defineProvider } = await import('../dist/index.js');
  const provider = defineProvider('Test.IdleWake', { events: { Ping: { id: 1, fields: [['n', 'u32']] } } });
  const session = await startSession({ providers: 'Test.IdleWake', output: file });
  const i32 = session.memory.i32;
  assert.ok(await eventually(() => Atomics.load(i32, Ctl.DrainAsleep) === 1), 'the drain sleeps when its pass finds nothing');
  const wakes = Atomics.load(i32, Ctl.DrainWake);
  provider.Ping.write(1);
  assert.ok(Atomics.load(i32, Ctl.DrainWake) > wakes, 'taking the first chunk rang the sleeping drain');
  const passes = session.memory.drainPasses;
  assert.ok(await eventually(() => session.memory.drainPasses > passes), 'and it made a pass');
  await session.stop();
  assert.deepEqual((await eventsOf(file)).filter((e) => e.name === 'Ping').map((e) => e.fields.n), [1]);
});

test('a periodic sample handed over without waking the drain still wakes it for events written before it', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'handover.tptrace');
  const { defineProvider } = await import('../dist/index.js');
  const { threadSessions } = await import('../dist/session/thread-sessions.js');
  const provider = defineProvider('Test.HandOver', { events: { Ping: { id: 1, fields: [['n', 'u32']] } } });
  const session = await startSession({ providers: 'Test.HandOver', output: file });
  const i32 = session.memory.i32;
  const asleep = () => Atomics.load(i32, Ctl.DrainAsleep) === 1;
  // A burst alone (a chunk taken for it) is left for the drain's next pass.
  assert.ok(await eventually(asleep), 'the drain sleeps');
  let wakes = Atomics.load(i32, Ctl.DrainWake);
  threadSessions.writeAndHandOver(() => provider.Ping.write(1));
  assert.equal(Atomics.load(i32, Ctl.DrainWake), wakes, 'a sample burst wakes no sleeping drain');
  // An event in a chunk the thread already held, which the drain has not seen: handing that chunk
  // over must wake the drain, or the event would wait for its time bound. Synchronous from here, so
  // the chunk's idle-seal timer cannot run meanwhile.
  provider.Ping.write(2);
  const passes = session.memory.drainPasses;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; !(session.memory.drainPasses > passes && asleep()); waited += 10) {
    assert.ok(waited < 20_000, 'the drain read the chunk and went back to sleep');
    Atomics.wait(pause, 0, 0, 10);
  }
  provider.Ping.write(3);
  wakes = Atomics.load(i32, Ctl.DrainWake);
  threadSessions.writeAndHandOver(() => provider.Ping.write(4));
  assert.ok(Atomics.load(i32, Ctl.DrainWake) > wakes, 'handing over a chunk with unread events wakes the drain');
  await session.stop();
  assert.deepEqual((await eventsOf(file)).filter((e) => e.name === 'Ping').map((e) => e.fields.n), [1, 2, 3, 4]);
});

/**
 * A provider `name` with one Ping event, and a connected pair of Unix sockets: `reader` (a client that
 * reads the trace) and `accepted` (the server's side, whose descriptor a session writes to).
 */
async function socketReaderSetup(t, name) {
  const { createServer, connect } = await import('node:net');
  const { once } = await import('node:events');
  const { defineProvider } = await import('../dist/index.js');
  const provider = defineProvider(name, { events: { Ping: { id: 1, fields: [['n', 'u32']] } } });
  const path = join(await tempDir(t), `${name}.sock`);
  const accepted = [];
  const listener = createServer({ allowHalfOpen: true }, (socket) => accepted.push(socket));
  await new Promise((resolve) => listener.listen(path, resolve));
  t.after(() => listener.close());
  const reader = connect({ path, allowHalfOpen: true });
  await once(reader, 'connect');
  return { provider, accepted, reader };
}

test('a socket reader\'s drain sleeps between the counters\' publications: each wakes it for one pass, whose sequence point releases the one before from a reader in time order, and a reader that leaves is still noticed', { timeout: 60_000 }, async (t) => {
  const { takeDescriptor } = await import('../dist/ipc/ipc-transport.js');
  const { threadSessions } = await import('../dist/session/thread-sessions.js');
  const { provider, accepted, reader } = await socketReaderSetup(t, 'Test.LiveWake');
  // A reader in timestamp order, with the default reorder window: each publication it is handed, when.
  const published = [];
  const reading = (async () => {
    for await (const e of readTrace(reader)) if (e.name === 'IntervalMs.Counter') published.push(performance.now());
  })().catch(() => {});
  assert.ok(await eventually(() => accepted.length === 1), 'the connection is accepted');
  const socket = accepted[0];
  t.after(() => socket.destroy());
  const session = await startSession({ providers: 'Runtime.Counters,Test.LiveWake', output: { fd: takeDescriptor(socket) } });
  const i32 = session.memory.i32;
  const asleep = () => Atomics.load(i32, Ctl.DrainAsleep) === 1;

  // A periodic sample is what a live reader waits for: handing it over wakes the sleeping drain.
  let woken = false;
  for (let tries = 0; tries < 20 && !woken; tries++) {
    assert.ok(await eventually(asleep), 'the drain sleeps between publications');
    const wakes = Atomics.load(i32, Ctl.DrainWake);
    // The drain may wake on its own between the look and the hand-over: then look again.
    if (!asleep()) continue;
    threadSessions.writeAndHandOver(() => provider.Ping.write(tries));
    woken = Atomics.load(i32, Ctl.DrainWake) > wakes;
  }
  assert.ok(woken, 'a sample handed over woke the sleeping drain of a live reader');

  // Passes, counted over a few idle seconds of publications once a second: one for each
  // publication (before: one more for the sequence point releasing it, and before that one every 100 ms).
  const seconds = 4;
  const passesBefore = session.memory.drainPasses;
  const releasedBefore = published.length;
  await sleep(seconds * 1000);
  const passes = session.memory.drainPasses - passesBefore;
  assert.ok(passes >= seconds - 1, `the publications reached the reader: ${passes} passes in ${seconds} s`);
  // A pass more for the sequence point that releases the stream's first events (not a sample's), and one for a late wake on a loaded machine.
  assert.ok(passes <= seconds + 2, `drain passes while idle: ${passes} in ${seconds} s`);
  // Each publication's pass releases the one before: the reader in time order gets them while they come.
  assert.ok(published.length - releasedBefore >= seconds - 2, `publications released to a reader in time order: ${published.length - releasedBefore} in ${seconds} s`);

  // The reader leaves without a word: the drain's check on its passes notices it.
  reader.destroy();
  const result = await session.done;
  await reading;
  assert.equal(result.status, 'failed');
  assert.match(result.error.message, /reader closed the connection/);
});

/**
 * A session of provider `name` streaming to a socket whose reader reads in time order: `received()`
 * is the first Ping's n once it has reached the reader; `done()` ends the reading.
 */
async function sessionToOrderedReader(t, name) {
  const { takeDescriptor } = await import('../dist/ipc/ipc-transport.js');
  const { threadSessions } = await import('../dist/session/thread-sessions.js');
  const { provider, accepted, reader } = await socketReaderSetup(t, name);
  t.after(() => reader.destroy());
  assert.ok(await eventually(() => accepted.length === 1), 'the connection is accepted');
  t.after(() => accepted[0].destroy());
  const session = await startSession({ providers: name, output: { fd: takeDescriptor(accepted[0]) } });
  t.after(() => session.stop());
  let received;
  const reading = (async () => {
    for await (const e of readTrace(reader)) if (e.name === 'Ping') return (received = e.fields.n);
  })().catch(() => {});
  return {
    provider,
    session,
    threadSessions,
    received: () => received,
    async done() {
      reader.destroy();
      await reading;
    },
  };
}

test('a sample with no sample after it still reaches a socket reader in time order while the session runs (a pass of its own writes the sequence point that releases it)', { timeout: 60_000 }, async (t) => {
  const { provider, threadSessions, received, done } = await sessionToOrderedReader(t, 'Test.LastSample');
  // One sample, and none after it: its sequence point cannot wait for the next sample's pass.
  threadSessions.writeAndHandOver(() => provider.Ping.write(7));
  assert.ok(await eventually(() => received() !== undefined, 10_000), 'the sample reached the reader in time order while the session runs');
  assert.equal(received(), 7);
  await done();
});

test('a sample read before its chunk is sealed still reaches a socket reader in time order when the drain is woken again with nothing new (the point owed is written by the next pass)', { timeout: 60_000 }, async (t) => {
  const { provider, session, threadSessions, received, done } = await sessionToOrderedReader(t, 'Test.SealedLate');
  const asleep = () => Atomics.load(session.memory.i32, Ctl.DrainAsleep) === 1;
  // Asleep, the drain wakes for the sample's chunk after the thread has counted its hand-over.
  assert.ok(await eventually(asleep), 'the drain sleeps');
  const passes = session.memory.drainPasses;
  threadSessions.writeAndHandOver(() => provider.Ping.write(9));
  // The pass that read the sample, then at once a wake that finds nothing new: what the seal of a
  // chunk whose sample an earlier pass read rings. Its pass comes before the point owed is due;
  // before, the drain then slept on for a next sample that never came (seen 1 run in 4).
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; !(session.memory.drainPasses > passes && asleep()); waited += 1) {
    assert.ok(waited < 20_000, 'the drain passed for the sample and went back to sleep');
    Atomics.wait(pause, 0, 0, 1);
  }
  session.memory.wakeDrain();
  assert.ok(await eventually(() => received() !== undefined, 10_000), 'the sample reached the reader in time order while the session runs');
  assert.equal(received(), 9);
  await done();
});

test('a session that only needs the resting sampler woken (Runtime.Counters) runs no watchdog where the turn meter is, or one that reads the resting thread 4 times a second; a block from rest weighs whole as delay either way', { timeout: 60_000, skip: !canRest && 'neither the addon nor /proc schedstat here: the sampler never rests' }, async (t) => {
  const file = join(await tempDir(t), 'wake-only.tptrace');
  const session = await startSession({ providers: 'Runtime.Counters:*:5:IntervalSec=0.5', output: file });
  t.after(() => session.stop());
  await settledAtRest();
  const seconds = 3;
  if (restsWithoutWatchdog()) {
    // No thread polls the resting loop: its own turns tell it when it works.
    assert.equal(watchdogCounters(), undefined, 'no watchdog');
    assert.ok(![...liveWorkers.values()].some((w) => workerRole(w) === 'tracepipe-watchdog'), 'no watchdog thread');
    // A block just before tracepipe's own tick, in the same turn: the tick's own work is left out, not the block.
    const before = loopSamplerState().meterWakes;
    setTimeout(() => {
      blockFor(300);
      runOwnTimer(() => {});
    }, 10);
    await sleep(500);
    assert.ok(loopSamplerState().meterWakes > before, 'a block before the tick in its turn woke the sampler');
    await settledAtRest();
  } else {
    const before = watchdogCounters();
    await sleep(seconds * 1000);
    const polls = watchdogCounters().polls - before.polls;
    // Before: every 100 ms (30 here), as when it watches for stalls.
    assert.ok(polls >= seconds && polls <= 5 * seconds, `readings of the resting thread in ${seconds} s: ${polls}`);
    await settledAtRest();
  }
  const wakes = loopSamplerState().meterWakes;
  const blockMs = 800;
  blockFor(blockMs);
  await sleep(1200);
  if (restsWithoutWatchdog()) assert.ok(loopSamplerState().meterWakes > wakes, 'the turn meter woke the sampler');
  await session.stop();
  const maxes = (await eventsOf(file)).filter((e) => e.name === 'LoopDelayMax.Counter').map((e) => e.fields.ms);
  const max = Math.max(...maxes);
  // The turn meter times the block's turn exactly; the watchdog saw the wake up to a reading late, and
  // the delay runs from the wake all the same (from libuv's idle time exactly; from a schedstat to
  // within its ticks and a reading).
  const least = mainRestRoute() === 'loop-idle' ? blockMs * 0.97 : blockMs - 300;
  assert.ok(max >= least && max <= blockMs + 300, `the largest delay, ${max} ms, is the ${blockMs} ms block`);
});
