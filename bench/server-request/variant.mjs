// One variant of the server-request benchmark, in its own process: `variant.mjs <dist dir> <providers> <iters> <batches>`.
// Publishes Node's http server messages (request start, response finish) for fresh request and response
// objects on a few keep-alive sockets, as Node does for each request a server answers, with a session
// of `providers` (Node.Channels in one of its modes), or, for providers `-`, with no session and an empty
// handler subscribed to each message: the floor any tracer of these messages pays (Node's hooks). It
// measures tracepipe's handlers, writers and span context per request, not what async hooks then cost
// the application's own promises.
import { channel, subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timeChannelBatches } from '../support/channel-batches.mjs';
import { reportResult } from '../support/variant-process.mjs';

const HOOKS_ONLY = '-';
const [dist, providers, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const CONNECTIONS = 10;
const START = 'http.server.request.start';
const FINISH = 'http.server.response.finish';
const { startSession } = await import(pathToFileURL(join(dist, 'index.js')).href);
const start = channel(START);
const finish = channel(FINISH);
// What the handlers read of a socket (it has no handle): nothing queued, and its bytes written so far.
const sockets = Array.from({ length: CONNECTIONS }, () => ({ bytesWritten: 0, writableLength: 0, _pendingData: null }));

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
let session;
if (providers === HOOKS_ONLY) {
  subscribe(START, () => {});
  subscribe(FINISH, () => {});
} else session = await startSession({ providers, output: join(dir, 'server.tptrace'), bufferingMode: 'drop', bufferSizeMB: 256 });
const timing = await timeChannelBatches((i) => {
  const socket = sockets[i % CONNECTIONS];
  const request = { method: 'GET', url: '/api/items' };
  const response = { statusCode: 200 };
  start.publish({ request, response, socket, server: null });
  socket.bytesWritten += 600;
  finish.publish({ request, response, socket, server: null });
}, ITERS, BATCHES);
const r = session ? await session.stop() : { eventsWritten: 0, eventsDropped: 0 };
rmSync(dir, { recursive: true, force: true });
reportResult({ ...timing, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped });
