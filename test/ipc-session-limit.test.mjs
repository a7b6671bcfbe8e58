// The per-process session limit seen from outside: a real target with the diagnostics server, tools
// that attach and never read, the one past the limit refused with the reason, and the target's memory.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { collectTracing, processInfo, readTrace } from '../dist/index.js';
import { encodeCollectRequest } from '../dist/ipc/ipc-commands.js';
import { CommandSet, encodeFrame, FrameReader, IpcErrorCode, MAX_REPLY_PAYLOAD, replyPayload, TracingCommand } from '../dist/ipc/ipc-protocol.js';
import { listEndpoints } from '../dist/ipc/ipc-transport.js';
import { startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);
const MiB = 1024 * 1024;
const DEFAULT_LIMIT = 8;
/** What `tracepipe collect` asks for by default: runtime providers only, which an idle target barely uses. */
const DEFAULT_PROFILE = 'Runtime.GC:*:Informational,Runtime.GCHeap:*:Informational,Runtime.EventLoop:*:Informational,Runtime.Process:*:Informational';

const attach = (pid) => collectTracing(pid, { providers: DEFAULT_PROFILE, bufferingMode: 'drop', bufferSizeMB: 64, rundown: true });
const sessionCount = async (pid) => (await processInfo(pid)).sessions.length;
const limitMessage = (pid, n) => new RegExp(`^tracepipe: the target refused CollectTracing: process ${pid} already runs ${n} tracing sessions?, its limit \\(TRACEPIPE_MAX_SESSIONS=${n}\\); stop one or raise the limit\\n$`);

/** A CollectTracing sent by hand: resolves with the reply frame (the connection is closed after it). */
function rawCollect(pid) {
  const { path } = listEndpoints().find((e) => e.pid === pid);
  const request = encodeFrame(CommandSet.Tracing, TracingCommand.CollectTracing, encodeCollectRequest({ providers: 'Test.App', bufferingMode: 'drop', bufferSizeMB: 1, rundown: false }));
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path }, () => socket.write(request));
    const reader = new FrameReader(MAX_REPLY_PAYLOAD);
    socket.setTimeout(20_000, () => socket.destroy(new Error('no reply within 20 s')));
    socket.on('data', (chunk) => {
      const frame = reader.push(chunk);
      if (frame) resolve(frame);
      if (frame) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('closed without a reply')));
  });
}

test(`${DEFAULT_LIMIT} tools that attach and never read: the next is refused with the reason, and the idle target stays small`, async (t) => {
  // The limit is the target's own default: nothing in the environment sets it.
  const target = await startTarget(t, dir, { nodeArgs: ['--expose-gc'], env: { TRACEPIPE_MAX_SESSIONS: '' } });
  const before = await target.mem();
  const streams = [];
  t.after(() => streams.forEach((s) => s.close()));
  for (let i = 0; i < DEFAULT_LIMIT; i++) streams.push(await attach(target.pid));
  // The reply comes from the drain as it starts; the target lists the session a moment later.
  await waitFor(`${DEFAULT_LIMIT} sessions to run`, async () => (await sessionCount(target.pid)) === DEFAULT_LIMIT);

  // One more, as a user runs it: one line, exit 1, no file left behind.
  const file = join(dir, 'refused.tptrace');
  const refused = await startCli(t, dir, ['collect', '--pid', String(target.pid), '-o', file]).done;
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, limitMessage(target.pid, DEFAULT_LIMIT));
  assert.equal(existsSync(file), false);
  // On the wire: an error reply with its own code, so a tool can tell it from other failures.
  const reply = await rawCollect(target.pid);
  assert.throws(() => replyPayload(reply), (e) => e.code === IpcErrorCode.SessionLimit && /already runs 8 tracing sessions/.test(e.message));
  assert.equal(await sessionCount(target.pid), DEFAULT_LIMIT, 'the refused requests started nothing');

  // Each session used to make 64 MiB resident at once (8 of them: ~600 MB on a ~60 MB process). Now
  // a session costs its drain thread plus the little buffer it uses; the bound leaves room for
  // allocator slack and thread stacks, not for one session's old 64 MiB each.
  const attached = await target.mem();
  t.diagnostic(`target rss ${Math.round(before.rss / MiB)} MiB idle, ${Math.round(attached.rss / MiB)} MiB with ${DEFAULT_LIMIT} non-reading sessions`);
  assert.ok(attached.rss - before.rss < DEFAULT_LIMIT * 32 * MiB, `rss grew by ${Math.round((attached.rss - before.rss) / MiB)} MiB`);

  // A tool that goes away frees its place: the target notices the closed connection and ends the session.
  streams.shift().close();
  await waitFor('the closed session to end', async () => (await sessionCount(target.pid)) === DEFAULT_LIMIT - 1);
  const again = join(dir, 'again.tptrace');
  const r = await startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '--duration', '500ms', '-o', again]).done;
  assert.equal(r.code, 0, r.stderr);
  const s = await readTrace(again).summary();
  assert.equal(s.complete, true);
  assert.ok(s.events > 0);
});

test('the startup session counts against the limit, and a bad TRACEPIPE_MAX_SESSIONS is the reason given', async (t) => {
  const target = await startTarget(t, dir, {
    env: { TRACEPIPE_MAX_SESSIONS: '2', TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'startup-{pid}.tptrace'), TRACEPIPE_PROVIDERS: 'Test.App' },
  });
  assert.equal(await sessionCount(target.pid), 1, 'the startup session runs');
  const stream = await attach(target.pid);
  t.after(() => stream.close());
  const refused = await startCli(t, dir, ['collect', '--pid', String(target.pid), '-o', join(dir, 'third.tptrace')]).done;
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, limitMessage(target.pid, 2));

  const bad = await startTarget(t, dir, { env: { TRACEPIPE_MAX_SESSIONS: 'lots' } });
  const r = await startCli(t, dir, ['collect', '--pid', String(bad.pid), '-o', join(dir, 'bad.tptrace')]).done;
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "tracepipe: the target refused CollectTracing: TRACEPIPE_MAX_SESSIONS must be a whole number of sessions, at least 1, not 'lots'\n");
});
