// Issue 21, a sibling of item 2: a client that starts a streaming session (CollectTracing) and then
// never reads. The drain used to wait at its full socket for ever, holding the session's memory and
// one of the process's sessions (with 8 such clients, the application's own startSession() failed).
// Now a reader that takes nothing for 30 s fails its session.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { listTargets, processInfo } from '../dist/index.js';
import { encodeCollectRequest } from '../dist/ipc/ipc-commands.js';
import { CommandSet, encodeFrame, TracingCommand } from '../dist/ipc/ipc-protocol.js';
import { startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);

test('a CollectTracing client that never reads: its session fails after 30 s without progress, and frees its place', { timeout: 120_000 }, async (t) => {
  const target = await startTarget(t, dir);
  const { endpoint } = (await listTargets()).find((x) => x.endpoint.pid === target.pid);
  const socket = net.connect({ path: endpoint.path });
  t.after(() => socket.destroy());
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.pause();
  socket.write(encodeFrame(CommandSet.Tracing, TracingCommand.CollectTracing, encodeCollectRequest({ providers: 'Test.App', bufferingMode: 'drop', bufferSizeMB: 1, rundown: false })));
  await waitFor('the session to start', async () => (await processInfo(target.pid)).sessions.length === 1);
  const started = Date.now();
  await waitFor('the stalled session to end', async () => (await processInfo(target.pid)).sessions.length === 0, 60_000, 500);
  // Not sooner than the bound (less the second or so the socket takes to fill), and the client is still there.
  assert.ok(Date.now() - started >= 25_000, `ended after ${Date.now() - started} ms`);
  assert.equal(socket.destroyed, false);
});
