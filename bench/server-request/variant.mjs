// One variant of the server-request benchmark, in its own process: `variant.mjs <dist dir> <providers> <iters> <batches>`.
// Publishes Node's http server messages (request start, response finish) for fresh request and response
// objects on a few keep-alive sockets, as Node does for each request a server answers, with a session
// of `providers` (Node.Channels in one of its modes). It measures tracepipe's handlers, writers and
// span context per request, not what async hooks then cost the application's own promises.
import { channel } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timeChannelBatches } from '../support/channel-batches.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [dist, providers, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const CONNECTIONS = 10;
const { startSession } = await import(pathToFileURL(join(dist, 'index.js')).href);
const start = channel('http.server.request.start');
const finish = channel('http.server.response.finish');
// What the handlers read of a socket: nothing queued, so its bytes written are what it dispatched.
const sockets = Array.from({ length: CONNECTIONS }, () => ({ _bytesDispatched: 0, writableLength: 0, _pendingData: null }));

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
const session = await startSession({ providers, output: join(dir, 'server.tptrace'), bufferingMode: 'drop', bufferSizeMB: 256 });
const timing = await timeChannelBatches((i) => {
  const socket = sockets[i % CONNECTIONS];
  const request = { method: 'GET', url: '/api/items' };
  const response = { statusCode: 200 };
  start.publish({ request, response, socket, server: null });
  socket._bytesDispatched += 600;
  finish.publish({ request, response, socket, server: null });
}, ITERS, BATCHES);
const r = await session.stop();
rmSync(dir, { recursive: true, force: true });
reportResult({ ...timing, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped });
