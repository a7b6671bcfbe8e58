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
import { FORMAT_MAJOR, FORMAT_MINOR } from '../dist/format/stream-header.js';
import { tempDir } from './helpers/temp-dir.mjs';

const run = promisify(execFile);
const ADDON = new URL('../native/gc-hook/build/Release/native_drain.node', import.meta.url).pathname;
const built = existsSync(ADDON) && process.env.TRACEPIPE_GC_HOOK !== '0' && process.env.TRACEPIPE_NATIVE_DRAIN !== '0';
const skip = built ? false : 'the native addon is not built here (or turned off)';

test('the native drain reads the layout src/buffers/session-memory.ts and src/schema/record-abi.ts define, and writes the format version src/format/stream-header.ts does', { skip }, () => {
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
    formatMajor: FORMAT_MAJOR,
    formatMinor: FORMAT_MINOR,
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

test('a full disk fails the start with the reason, as a worker drain does, and the application runs on', { skip: skip || (!existsSync('/dev/full') && 'no /dev/full') }, async () => {
  for (const env of ['1', '0']) {
    process.env.TRACEPIPE_NATIVE_DRAIN = env;
    try {
      await assert.rejects(startSession({ providers: 'Runtime.Process', output: '/dev/full' }), /^SessionError: cannot start session: ENOSPC: no space left on device, write$/);
    } finally {
      delete process.env.TRACEPIPE_NATIVE_DRAIN;
    }
  }
  // The application is untouched: it goes on and can trace again.
  assert.equal(await workersStartedBy({ providers: 'Runtime.Process', output: '/dev/null' }), 0);
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

test('field names holding ":" and "," keep two event types apart, in either drain', { skip, timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const script = join(dir, 'collide.mjs');
  await (await import('node:fs/promises')).writeFile(
    script,
    `import { Worker, isMainThread, parentPort } from 'node:worker_threads';
    import { defineProvider, startSession, readTrace } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
    // The same provider and event, with fields one drain once keyed alike: 'a:u8,b' (one) and 'a', 'b' (two).
    const p = defineProvider('Collide', { events: { E: { id: 1, fields: isMainThread ? [['a:u8,b', 'u8']] : [['a', 'u8'], ['b', 'u8']] } } });
    if (!isMainThread) parentPort.once('message', () => { p.E.write(7, 9); parentPort.postMessage('done'); });
    else {
      const session = await startSession({ providers: 'Collide', output: process.argv[2] });
      const w = new Worker(new URL(import.meta.url));
      await new Promise((r) => w.once('online', r));
      p.E.write(5);
      w.postMessage('go');
      await new Promise((r) => w.once('message', r));
      await w.terminate();
      await session.stop();
      const out = [];
      for await (const e of readTrace(process.argv[2])) if (e.provider === 'Collide') out.push(e.fields);
      console.log(JSON.stringify(out.sort((a, b) => Object.keys(a).length - Object.keys(b).length)));
    }`,
  );
  for (const env of ['1', '0']) {
    const { stdout } = await run(process.execPath, [script, join(dir, `c${env}.tptrace`)], { env: { ...process.env, TRACEPIPE_NATIVE_DRAIN: env } });
    assert.deepEqual(JSON.parse(stdout), [{ 'a:u8,b': 5 }, { a: 7, b: 9 }], `TRACEPIPE_NATIVE_DRAIN=${env}`);
  }
});

test('a record with a bad length in a chunk still being written: either drain writes the events before it once', { skip }, async (t) => {
  const { ChunkI32: CI, ChunkF64: CF } = await import('../dist/buffers/session-memory.js');
  const { DrainLoop } = await import('../dist/drain/drain-loop.js');
  const { ByteWriter } = await import('../dist/format/byte-writer.js');
  const { encodeDescriptor } = await import('../dist/format/metadata-codec.js');
  const { openSync, readFileSync } = await import('node:fs');
  // One thread's chunk, not sealed: a description, two events, then a record 3 bytes long (shorter than its header).
  const memory = () => {
    const m = SessionMemory.create(planLayout(1), BufferingMode.Drop);
    const { i32, u32, f64, u8 } = m;
    const slot = m.allocSlot(1, 0, 0);
    const base = m.chunkBase(0);
    i32[(base >> 2) + CI.Owner] = slot;
    f64[(base >> 3) + CF.FirstSeq] = 0;
    i32[(base >> 2) + CI.State] = ChunkState.Owned;
    i32[Ctl.FreeCount]--;
    i32[Ctl.ChunksTaken]++;
    let pos = base + CHUNK_HEADER_BYTES;
    const put = (len, type, ts, payload) => {
      u32[pos >> 2] = len;
      u32[(pos >> 2) + 1] = type;
      f64[(pos >> 3) + 1] = ts;
      u8.set(payload, pos + RECORD_HEADER_SIZE);
      pos += (len + 7) & ~7;
    };
    const w = new ByteWriter();
    w.varint(1);
    encodeDescriptor({ provider: 'P', name: 'E', id: 1, version: 0, level: 4, keywords: 0n, fields: [['v', 'u8']] }, w);
    const d = w.take();
    put(RECORD_HEADER_SIZE + d.length, METADATA_TYPE_INDEX, 0, d);
    put(RECORD_HEADER_SIZE + 1, 1, 1, [5]);
    put(RECORD_HEADER_SIZE + 1, 1, 2, [6]);
    put(3, 1, 3, []);
    u32[(base >> 2) + CI.Committed] = pos;
    f64[m.slotF64(slot, SlotF64.NextSeq)] = 2;
    i32[Ctl.State] = SessionState.Stopping;
    i32[Ctl.Exiting] = 1;
    return m;
  };
  const info = { pid: 1, processTitle: 't', argv: [], execArgv: [], nodeVersion: process.version, tracepipeVersion: '0', platform: 'linux', arch: 'x64', hostname: 'h', clock: { wallClockNs: '0', monotonicNs: '0' }, session: { id: 1, providers: 'P', bufferingMode: 'drop', bufferSizeMB: 1 } };
  const dir = await tempDir(t);
  const count = async (file) => {
    let n = 0;
    const skim = await readTrace(file).skim((e) => void (e.provider === 'P' && n++));
    return { n, complete: skim.complete };
  };
  const parts = [];
  new DrainLoop(memory(), { write: (b) => parts.push(Buffer.from(b)), close() {} }, info, 0).run();
  const workerFile = join(dir, 'worker.tptrace');
  (await import('node:fs')).writeFileSync(workerFile, Buffer.concat(parts));
  const nativeFile = join(dir, 'native.tptrace');
  const fd = openSync(nativeFile, 'w', 0o600);
  const addon = createRequire(import.meta.url)(ADDON);
  await new Promise((resolve) => addon.start(memory().sab, fd, false, process.hrtime.bigint(), new TextEncoder().encode(JSON.stringify(info)), undefined, resolve));
  assert.ok(readFileSync(nativeFile).length > 0);
  assert.deepEqual(await count(workerFile), { n: 2, complete: true });
  assert.deepEqual(await count(nativeFile), { n: 2, complete: true });
});

test('a session a client attaches (its socket as the output) is drained natively in Drop mode, by a worker in Block mode', { skip, timeout: 60_000 }, async (t) => {
  const { collectTracing, defineProvider, startDiagnosticServer, stopTracing } = await import('../dist/index.js');
  const { useTmpdir } = await import('./helpers/ipc-processes.mjs');
  const tmp = process.env.TMPDIR;
  await useTmpdir((f) => t.after(f));
  // The endpoint's directory is this test's alone: the next tests make theirs where they did.
  t.after(() => (tmp === undefined ? delete process.env.TMPDIR : (process.env.TMPDIR = tmp)));
  const server = await startDiagnosticServer();
  t.after(() => server.close());
  const p = defineProvider('Native.Attach', { events: { Hit: { id: 1, fields: [['n', 'u32']] } } });
  for (const [bufferingMode, workers] of [['drop', 0], ['block', 1]]) {
    const created = [];
    const onWorker = ({ worker }) => created.push(worker);
    subscribe('worker_threads', onWorker);
    let bytes;
    try {
      const stream = await collectTracing(process.pid, { providers: 'Native.Attach', bufferingMode, bufferSizeMB: 1, rundown: true });
      const chunks = [];
      const read = (async () => {
        for await (const c of stream) chunks.push(c);
      })();
      for (let i = 0; i < 1000; i++) p.Hit.write(i);
      await stopTracing(process.pid, stream.sessionId);
      await read;
      bytes = Buffer.concat(chunks);
    } finally {
      unsubscribe('worker_threads', onWorker);
    }
    assert.equal(created.length, workers, `${bufferingMode}: drain workers`);
    let n = 0;
    const skim = await readTrace((async function* () {
      yield bytes;
    })()).skim((e) => void (e.provider === 'Native.Attach' && n++));
    assert.equal(skim.complete, true, bufferingMode);
    assert.equal(n, 1000, bufferingMode);
  }
});

test("a client's socket whose stop timed out: its opener closes it and the number is reused, and the drain writes nothing there", { skip, timeout: 60_000 }, async (t) => {
  const net = await import('node:net');
  const { once } = await import('node:events');
  const { openSync, closeSync, fstatSync } = await import('node:fs');
  const { defineProvider } = await import('../dist/index.js');
  const dir = await tempDir(t);
  const server = net.createServer();
  server.listen(join(dir, 's.sock'));
  await once(server, 'listening');
  const client = net.connect(join(dir, 's.sock'));
  client.pause(); // Never reads: the socket fills and the drain waits on it.
  const [socket] = await once(server, 'connection');
  socket.pause();
  const fd = socket._handle.fd;
  t.after(() => {
    client.destroy();
    server.close();
  });
  const p = defineProvider('Native.Reuse', { events: { Hit: { id: 1, fields: [['s', 'string']] } } });
  const session = await startSession({ providers: 'Native.Reuse', output: { fd }, bufferSizeMB: 4, stopTimeoutMs: 300 });
  const big = 'x'.repeat(2000);
  for (let k = 0; k < 40; k++) {
    for (let i = 0; i < 2000; i++) p.Hit.write(big);
    await new Promise((r) => setTimeout(r, 20));
  }
  let victim = -1;
  // As src/ipc/diagnostics-requests.ts does: the socket is closed once the session is done, and the
  // next open takes the lowest free number, most likely the socket's.
  session.done.then(() => {
    socket.destroy();
    victim = openSync(join(dir, 'victim'), 'w');
  });
  const r = await session.stop();
  assert.equal(r.status, 'failed');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(fstatSync(victim).size, 0, 'the unrelated file received no trace bytes');
  closeSync(victim);
});

test('a session that starts while an import() of another of tracepipe\'s entries is under way gets a drain (a worker, if the native one cannot load then)', { skip, timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const entry = new URL('../dist/index.js', import.meta.url).href;
  const code = `
    import { startSession } from ${JSON.stringify(entry)};
    // The machinery loads (an option refused after it has), then an import of another entry is under way.
    await startSession({ providers: 'Runtime.Process', output: '' }).catch(() => {});
    const k = Number(process.argv[1]);
    const inflight = import(${JSON.stringify(new URL('../dist/export.js', import.meta.url).href)});
    for (let i = 0; i < k; i++) await new Promise((r) => setImmediate(r));
    const s = await startSession({ providers: 'Runtime.Process', output: process.argv[2] });
    console.log((await s.stop()).status);
    await inflight;`;
  for (let k = 0; k <= 10; k++) {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code, String(k), join(dir, `k${k}.tptrace`)]);
    assert.equal(stdout.trim(), 'stopped', `after ${k} turns`);
  }
});
