// One variant of the client-request benchmark, in its own process: `variant.mjs <dist dir> <iters> <batches>`.
// Publishes Node's http client messages (request start, response finish) for fresh request objects,
// as Node does for each http.request(), with a session recording Node.Channels' http events and spans.
import { channel } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [dist, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const WARMUP_BATCHES = 2;
const PAUSE_MS = 150;
const { startSession } = await import(pathToFileURL(join(dist, 'index.js')).href);
const start = channel('http.client.request.start');
const finish = channel('http.client.response.finish');
const response = { statusCode: 200, headers: { 'content-length': '2' } };

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
const session = await startSession({ providers: 'Node.Channels:0x11:5', output: join(dir, 'client.tptrace'), bufferingMode: 'drop', bufferSizeMB: 256 });
const wall = [];
const cpu = [];
for (let b = 0; b < WARMUP_BATCHES + BATCHES; b++) {
  await new Promise((r) => setTimeout(r, PAUSE_MS));
  const c0 = threadCpu();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ITERS; i++) {
    const request = { method: 'GET', host: 'localhost', path: '/items' };
    start.publish({ request });
    finish.publish({ request, response });
  }
  const t1 = process.hrtime.bigint();
  const c1 = threadCpu();
  if (b < WARMUP_BATCHES) continue;
  wall.push(Number(t1 - t0) / ITERS);
  if (c0 && c1) cpu.push((c1.runNs - c0.runNs) / ITERS);
}
const r = await session.stop();
rmSync(dir, { recursive: true, force: true });
reportResult({ nsPerOp: median(wall), cpuNsPerOp: cpu.length ? median(cpu) : null, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped });
