// 10,000 connections of garbage, mutated, truncated, oversized and abandoned requests against a real
// target: each gets an error reply (or, for a request that happens to be valid, its answer) and a
// closed connection; afterwards the target still collects normally and its memory has not grown.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { collectTracing, listTargets, processInfo, readTrace, stopTracing } from '../dist/index.js';
import { encodeCollectRequest, encodeSessionId } from '../dist/ipc/ipc-commands.js';
import { CommandSet, encodeFrame, FrameReader, MAX_REPLY_PAYLOAD, ProcessCommand, replyPayload, TracingCommand } from '../dist/ipc/ipc-protocol.js';
import { startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';
import { seededRandom } from './helpers/seeded-random.mjs';

const CONNECTIONS = 10_000;
const CONCURRENCY = 16;
const SEED = Number(process.env.IPC_FUZZ_SEED ?? 20261122);
/** Requests that really start a session and then vanish mid-stream (each costs a drain thread). */
const ABANDONED_COLLECTS = 40;
/** Clients that send half a frame and go quiet; the target times them out. */
const SILENT_CLIENTS = 8;

const dir = await useTmpdir(after);

const VALID = [
  encodeFrame(CommandSet.Process, ProcessCommand.ProcessInfo),
  encodeFrame(CommandSet.Tracing, TracingCommand.StopTracing, encodeSessionId(123456)),
  encodeFrame(CommandSet.Tracing, TracingCommand.CollectTracing, encodeCollectRequest({ providers: '1nvalid', bufferingMode: 'drop', bufferSizeMB: 1, rundown: true })),
  encodeFrame(CommandSet.Tracing, TracingCommand.CollectTracing, encodeCollectRequest({ providers: 'Test.App', bufferingMode: 'drop', bufferSizeMB: 0.001, rundown: true })),
];

/** One hostile request: what to send, and whether to half-close afterwards. */
function hostile(rand) {
  const int = (n) => Math.floor(rand() * n);
  const bytes = (n) => Uint8Array.from({ length: n }, () => int(256));
  // Mutations of the valid requests, except the one that really starts a session.
  const base = VALID[int(VALID.length - 1)];
  switch (int(7)) {
    case 0: {
      // garbage; left open only when it holds a whole header (silence is the silent clients' job)
      const data = bytes(int(80));
      return { data, end: data.length < 12 || rand() < 0.7 };
    }
    case 1: {
      // a valid frame with a few bytes flipped (the length field included)
      const b = base.slice();
      for (let k = 1 + int(3); k > 0; k--) b[int(b.length)] = int(256);
      return { data: b, end: true };
    }
    case 2: // truncated, then half-closed
      return { data: base.subarray(0, int(base.length)), end: true };
    case 3: {
      // oversized length, with or without some of the payload
      const b = base.slice(0, 12);
      new DataView(b.buffer).setUint32(8, 65_537 + int(1 << 30), true);
      return { data: rand() < 0.5 ? b : Uint8Array.from([...b, ...bytes(int(500))]), end: rand() < 0.5 };
    }
    case 4: // unknown command
      return { data: encodeFrame(1 + int(254), int(256), bytes(int(20))), end: rand() < 0.5 };
    case 5: // a known command with a random payload
      return { data: encodeFrame(CommandSet.Tracing, rand() < 0.5 ? TracingCommand.CollectTracing : TracingCommand.StopTracing, bytes(int(40))), end: true };
    default: // a frame followed by trailing garbage, or two frames at once
      return { data: Uint8Array.from([...base, ...(rand() < 0.5 ? bytes(int(30)) : base)]), end: rand() < 0.5 };
  }
}

/** Sends `data`, then reads until the target closes; resolves with the reply frame, if one came. */
function exchange(path, { data, end }, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path, allowHalfOpen: true });
    const reader = new FrameReader(MAX_REPLY_PAYLOAD);
    let frame;
    let bad;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the target did not close a connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(data);
      if (end) socket.end();
    });
    socket.on('data', (chunk) => {
      if (frame || bad) return;
      try {
        frame = reader.push(chunk);
      } catch (e) {
        bad = e;
      }
      // An OK reply to a request that mutated into a valid CollectTracing is followed by a stream
      // that lasts until we leave; the target closes the connection after any other reply.
      if (frame && frame.commandId === 0) socket.destroy();
    });
    // The target has closed its side: close ours (the socket is half-open by choice, to send end()).
    socket.on('end', () => socket.end());
    // A reset after the reply is fine: the target closed with our unread bytes still queued.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      if (bad) reject(new Error(`the target sent a malformed reply: ${bad.message}`));
      else resolve(frame);
    });
  });
}

function kindOf(frame) {
  if (!frame) return 'closed without reply';
  try {
    replyPayload(frame);
    return 'ok';
  } catch (e) {
    return `error ${e.code}`;
  }
}

test(`${CONNECTIONS} hostile connections: error replies, closed connections, a target that still works and did not grow (seed ${SEED})`, { timeout: 240_000 }, async (t) => {
  const target = await startTarget(t, dir, { nodeArgs: ['--expose-gc'] });
  const [{ endpoint }] = await listTargets();
  const collect = async () => {
    const stream = await collectTracing(target.pid, { providers: 'Test.App', bufferingMode: 'drop', bufferSizeMB: 1, rundown: true });
    const chunks = [];
    const reading = (async () => {
      for await (const c of stream) chunks.push(c);
    })();
    await new Promise((r) => setTimeout(r, 200));
    await stopTracing(target.pid, stream.sessionId);
    await reading;
    return readTrace((async function* () {
      yield Buffer.concat(chunks);
    })()).summary();
  };

  // Warm up every path the flood takes, so what is measured after it is growth, not first use.
  await collect();
  for (let i = 0; i < 300; i++) await exchange(endpoint.path, hostile(seededRandom(i)));
  const before = await target.mem();

  const rand = seededRandom(SEED);
  const counts = {};
  const silent = Array.from({ length: SILENT_CLIENTS }, () => exchange(endpoint.path, { data: VALID[0].subarray(0, 7), end: false }));
  let next = 0;
  const worker = async () => {
    while (next < CONNECTIONS) {
      const i = next++;
      let request = hostile(rand);
      if (i % Math.floor(CONNECTIONS / ABANDONED_COLLECTS) === 0) {
        // A real session whose client disappears after the reply and some of the stream.
        request = { data: VALID[3], end: false, abandon: true };
      }
      const kind = request.abandon ? await abandonedCollect(endpoint.path) : kindOf(await exchange(endpoint.path, request));
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const silentReplies = (await Promise.all(silent)).map(kindOf);
  t.diagnostic(`replies: ${JSON.stringify(counts)}; silent clients: ${JSON.stringify(silentReplies)}`);

  assert.deepEqual(silentReplies, Array(SILENT_CLIENTS).fill('error 10'));
  assert.equal(counts['abandoned collect'], ABANDONED_COLLECTS);
  // Every hostile request was answered with an error (or, for the rare valid one, an answer).
  assert.equal(counts['closed without reply'] ?? 0, 0);
  for (const code of [1, 3, 4, 5, 6, 7]) assert.ok(counts[`error ${code}`] > 0, `no error ${code} reply in ${JSON.stringify(counts)}`);

  // Abandoned sessions end once the target notices their clients are gone.
  await waitFor('abandoned sessions to end', async () => (await processInfo(target.pid)).sessions.length === 0, 30_000, 100);
  const s = await collect();
  assert.equal(s.complete, true);
  assert.ok(s.events > 0);

  const afterFlood = await target.mem();
  t.diagnostic(`heapUsed ${before.heapUsed} -> ${afterFlood.heapUsed}, rss ${before.rss} -> ${afterFlood.rss}`);
  // Per-connection state that leaked would show here: 10,000 connections x a few hundred bytes.
  assert.ok(afterFlood.heapUsed - before.heapUsed < 3 * 1024 * 1024, `heap grew from ${before.heapUsed} to ${afterFlood.heapUsed}`);
  // RSS includes allocator slack and the drain threads' stacks; only gross growth is a finding.
  assert.ok(afterFlood.rss - before.rss < 96 * 1024 * 1024, `rss grew from ${before.rss} to ${afterFlood.rss}`);
  assert.equal(target.child.exitCode, null);
});

/** Starts a real session, reads its reply and a little of the stream, then vanishes without a word. */
function abandonedCollect(path) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path });
    let got = 0;
    socket.on('connect', () => socket.write(VALID[3]));
    socket.on('data', (chunk) => {
      got += chunk.length;
      if (got > 12) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => (got > 12 ? resolve('abandoned collect') : reject(new Error('no reply to a valid CollectTracing'))));
  });
}
