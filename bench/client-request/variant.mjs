// One variant of the client-request benchmark, in its own process: `variant.mjs <dist dir> <iters> <batches>`.
// Publishes Node's http client messages (request start, response finish) for fresh request objects,
// as Node does for each http.request(), with a session recording Node.Channels' http events and spans.
import { channel } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timeChannelBatches } from '../support/channel-batches.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [dist, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const { startSession } = await import(pathToFileURL(join(dist, 'index.js')).href);
const start = channel('http.client.request.start');
const finish = channel('http.client.response.finish');
const response = { statusCode: 200, headers: { 'content-length': '2' } };

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
const session = await startSession({ providers: 'Node.Channels:0x11:5', output: join(dir, 'client.tptrace'), bufferingMode: 'drop', bufferSizeMB: 256 });
const timing = await timeChannelBatches(() => {
  const request = { method: 'GET', host: 'localhost', path: '/items' };
  start.publish({ request });
  finish.publish({ request, response });
}, ITERS, BATCHES);
const r = await session.stop();
rmSync(dir, { recursive: true, force: true });
reportResult({ ...timing, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped });
