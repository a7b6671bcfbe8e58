// The native drain (native/gc-hook/native_drain.cc): a Drop-mode session written to a file is drained
// by a thread with no JavaScript isolate, and its stream says what the worker drain's says. Checked
// here: it reads the layout the producers write; it serves exactly the sessions it can (no drain
// worker for them, one for the others); the same program traced through either drain gives the same
// events, thread by thread, sequence by sequence; a full disk fails the session with the reason and
// leaves the application running; and the exit flush ends its stream complete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readTrace, startSession } from '../dist/index.js';
import { Ctl, SlotI32, SlotF64, ChunkI32, ChunkF64, ChunkState, SessionState, SlotState, DropReasonCode, CONTROL_BYTES, SLOT_BYTES, CHUNK_HEADER_BYTES, INITIAL_RESIDENT_BYTES, DROP_REASONS, SessionMemory, planLayout, BufferingMode } from '../dist/buffers/session-memory.js';
import { RECORD_HEADER_SIZE, METADATA_TYPE_INDEX, METADATA_PART_TYPE_INDEX, SEQUENCE_GAP_TYPE_INDEX } from '../dist/schema/record-abi.js';
import { tempDir } from './helpers/temp-dir.mjs';

const run = promisify(execFile);
const ADDON = new URL('../native/gc-hook/build/Release/native_drain.node', import.meta.url).pathname;
const built = existsSync(ADDON) && process.env.TRACEPIPE_GC_HOOK !== '0' && process.env.TRACEPIPE_NATIVE_DRAIN !== '0';
const skip = built ? false : 'the native addon is not built here (or turned off)';

test('the native drain reads the layout src/buffers/session-memory.ts and src/schema/record-abi.ts define', { skip }, () => {
  const layout = createRequire(import.meta.url)(ADDON).layout();
  const js = {
    magic: SessionMemory.create(planLayout(1), BufferingMode.Drop).i32[Ctl.Magic],
    controlBytes: CONTROL_BYTES,
    slotBytes: SLOT_BYTES,
    chunkHeaderBytes: CHUNK_HEADER_BYTES,
    recordHeaderSize: RECORD_HEADER_SIZE,
    dropReasons: DROP_REASONS.length,
    initialResidentBytes: INITIAL_RESIDENT_BYTES,
    metadataType: METADATA_TYPE_INDEX,
    metadataPartType: METADATA_PART_TYPE_INDEX,
    sequenceGapType: SEQUENCE_GAP_TYPE_INDEX,
    'reason.TooLarge': DropReasonCode.TooLarge,
    'reason.InvalidArgument': DropReasonCode.InvalidArgument,
  };
  for (const [prefix, table] of [['', Ctl], ['slot.', SlotI32], ['slotF64.', SlotF64], ['chunk.', ChunkI32], ['chunkF64.', ChunkF64], ['state.', SessionState], ['slotState.', SlotState]]) {
    for (const [k, v] of Object.entries(table)) js[prefix + k] = v;
  }
  js['chunkState.Free'] = ChunkState.Free;
  const compared = Object.keys(layout);
  assert.ok(compared.length >= 50, `the addon reports ${compared.length} constants`);
  for (const k of compared) assert.equal(layout[k], js[k], `${k}: native ${layout[k]}, JavaScript ${js[k]}`);
});

/** Starts a session and reports the drain workers made meanwhile (diagnostics_channel sees every new Worker). */
async function workersStartedBy(options) {
  const created = [];
  const onWorker = ({ worker }) => created.push(worker);
  subscribe('worker_threads', onWorker);
  try {
    const session = await startSession(options);
    const r = await session.stop();
    assert.equal(r.status, 'stopped');
    return created.length;
  } finally {
    unsubscribe('worker_threads', onWorker);
  }
}

test('a Drop-mode session to a file runs no drain worker; Block mode, and TRACEPIPE_NATIVE_DRAIN=0, run one', { skip }, async (t) => {
  const dir = await tempDir(t);
  assert.equal(await workersStartedBy({ providers: 'Runtime.Process', output: join(dir, 'drop.tptrace') }), 0);
  assert.equal(await workersStartedBy({ providers: 'Runtime.Process', output: join(dir, 'block.tptrace'), bufferingMode: 'block' }), 1);
  process.env.TRACEPIPE_NATIVE_DRAIN = '0';
  try {
    assert.equal(await workersStartedBy({ providers: 'Runtime.Process', output: join(dir, 'off.tptrace') }), 1);
  } finally {
    delete process.env.TRACEPIPE_NATIVE_DRAIN;
  }
  // Each stream is complete: its end-of-stream block says how many events it holds.
  for (const f of ['drop', 'block', 'off']) {
    const skim = await readTrace(join(dir, `${f}.tptrace`)).skim(() => {});
    assert.equal(skim.complete, true, f);
    assert.ok(skim.events > 0, `${f}: events`);
  }
});

// Three threads write a known sequence of events (strings of every length class, numbers of every
// width); each run prints them, per thread in sequence order, with the session's counts.
const PROGRAM = `
  import { Worker, isMainThread, threadId, parentPort } from 'node:worker_threads';
  import { defineProvider, startSession, readTrace } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
  const p = defineProvider('Test.Drains', { events: {
    Mixed: { id: 1, fields: [['i', 'u32'], ['s', 'string'], ['big', 'i64'], ['x', 'f64'], ['b', 'bool'], ['raw', 'bytes']] },
    Bare: { id: 2, fields: [] },
  } });
  const write = (n) => { for (let i = 0; i < n; i++) { p.Mixed.write(i, 'x'.repeat(i % 300), BigInt(i) * -7919n, i / 3, i % 2 === 0, new Uint8Array(i % 70).fill(i & 255)); if (i % 97 === 0) p.Bare.write(); } };
  if (!isMainThread) {
    parentPort.once('message', () => { write(20000); parentPort.postMessage('done'); });
  } else {
    const out = process.argv[2];
    const session = await startSession({ providers: 'Test.Drains', output: out });
    const workers = [0, 1].map(() => new Worker(new URL(import.meta.url)));
    await Promise.all(workers.map((w) => new Promise((r) => w.once('online', r))));
    await new Promise((r) => setTimeout(r, 100));
    const done = workers.map((w) => new Promise((r) => w.once('message', r)));
    workers.forEach((w) => w.postMessage('go'));
    write(30000);
    await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    const r = await session.stop();
    const byThread = new Map();
    const trace = readTrace(out);
    for await (const e of trace) {
      if (e.provider !== 'Test.Drains') continue;
      if (!byThread.has(e.threadId)) byThread.set(e.threadId, []);
      const f = e.fields;
      byThread.get(e.threadId).push([e.sequence, e.name, f.i, f.s?.length, String(f.big), f.x, f.b, f.raw ? Array.from(f.raw).join(',') : undefined].join('|'));
    }
    const threads = [...byThread.values()].map((l) => l.join('\\n')).sort();
    const skim = await readTrace(out).skim(() => {});
    console.log(JSON.stringify({ written: r.eventsWritten, dropped: r.eventsDropped, lost: skim.dropped, complete: skim.complete, threads }));
  }`;

test('the same program traced through the native drain and the worker drain gives the same events, thread by thread, sequence by sequence', { skip, timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const script = join(dir, 'program.mjs');
  await (await import('node:fs/promises')).writeFile(script, PROGRAM);
  const traced = async (env, name) => JSON.parse((await run(process.execPath, [script, join(dir, name)], { env: { ...process.env, ...env }, maxBuffer: 1 << 28 })).stdout);
  const native = await traced({}, 'native.tptrace');
  const worker = await traced({ TRACEPIPE_NATIVE_DRAIN: '0' }, 'worker.tptrace');
  // 70,000 Mixed events and their Bare ones, with 64 MB of buffer: nothing is dropped by either.
  for (const r of [native, worker]) {
    assert.equal(r.dropped, 0);
    assert.equal(r.lost, 0);
    assert.equal(r.complete, true);
  }
  assert.equal(native.written, worker.written);
  assert.equal(native.threads.length, 3);
  assert.deepEqual(native.threads, worker.threads);
});

test('a full disk fails the native drain with the reason, and the application runs on', { skip: skip || (!existsSync('/dev/full') && 'no /dev/full') }, async () => {
  const session = await startSession({ providers: 'Runtime.Process', output: '/dev/full' });
  const r = await session.stop();
  assert.equal(r.status, 'failed');
  assert.match(r.error.message, /No space left on device, writing the trace/);
  // The application is untouched: it goes on and can trace again.
  assert.equal(typeof (await workersStartedBy({ providers: 'Runtime.Process', output: '/dev/null' })), 'number');
});

test('a file that cannot be opened fails the start with the reason, as a worker drain does', { skip }, async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(startSession({ providers: 'Runtime.Process', output: join(dir, 'missing', 'x.tptrace') }), (e) => {
    assert.match(e.message, /^cannot start session: .*ENOENT/);
    return true;
  });
});

test('process.exit() right after the start: the native drain ends the stream complete before the process does', { skip }, async (t) => {
  const dir = await tempDir(t);
  const out = join(dir, 'exit.tptrace');
  const code = `
    import { defineProvider, startSession } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
    const p = defineProvider('Test.Exit', { events: { E: { id: 1, fields: [['i', 'u32']] } } });
    await startSession({ providers: 'Test.Exit', output: ${JSON.stringify(out)} });
    for (let i = 0; i < 5000; i++) p.E.write(i);
    process.exit(7);`;
  const r = await run(process.execPath, ['--input-type=module', '-e', code]).catch((e) => e);
  assert.equal(r.code, 7);
  let n = 0;
  const skim = await readTrace(out).skim((e) => void (e.provider === 'Test.Exit' && n++));
  assert.equal(n, 5000);
  assert.equal(skim.complete, true);
  assert.equal(skim.dropped, 0);
});
