// One run of the seed's differential, in its own process: `<drop|block> <total events> <worker threads>`.
// The main thread and each worker produce total / (workers + 1) events, started together.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readTrace, startSession } from '../../dist/index.js';
import { bench, PROVIDERS } from '../support/tick-provider.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [mode, totalArg, workersArg] = process.argv.slice(2);
const TOTAL = Number(totalArg);
const WORKERS = Number(workersArg);
const share = TOTAL / (WORKERS + 1);
if (!Number.isInteger(share)) throw new Error(`${TOTAL} events do not split evenly over ${WORKERS + 1} threads`);
const E = bench.Tick;

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
const workers = [];
try {
  const file = join(dir, `${mode}.tptrace`);
  const session = await startSession({ providers: PROVIDERS, output: file, bufferingMode: mode, bufferSizeMB: 1 });
  if (session.bufferingMode !== mode) throw new Error(`asked for ${mode}, session runs ${session.bufferingMode}`);
  const start = new SharedArrayBuffer(4);
  const finished = [];
  for (let w = 0; w < WORKERS; w++) {
    const worker = new Worker(new URL('./producer-worker.mjs', import.meta.url), { workerData: { count: share, start } });
    workers.push(worker);
    finished.push(
      new Promise((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (m) => {
          if (m.type === 'ready' && !m.enabled) reject(new Error('the event is not enabled in a worker'));
          if (m.type === 'done') resolve(m);
        });
      }),
    );
  }
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  Atomics.store(new Int32Array(start), 0, 1);
  Atomics.notify(new Int32Array(start), 0);
  const t0 = performance.timeOrigin + performance.now();
  for (let i = 0; i < share; i++) {
    if (E.enabled) E.write(1.5, 2.5, i, -4);
  }
  const t1 = performance.timeOrigin + performance.now();
  const spans = [{ startMs: t0, endMs: t1 }, ...(await Promise.all(finished))];
  const first = Math.min(...spans.map((s) => s.startMs));
  const last = Math.max(...spans.map((s) => s.endMs));
  const stopAt = performance.now();
  const r = await session.stop();
  const stopMs = performance.now() - stopAt;
  const summary = await readTrace(file).summary();
  reportResult({
    mode,
    workers: WORKERS,
    attempted: TOTAL,
    produceMs: last - first,
    slowestThreadMs: Math.max(...spans.map((s) => s.endMs - s.startMs)),
    stopMs,
    status: r.status,
    resultWritten: r.eventsWritten,
    resultDropped: r.eventsDropped,
    readerEvents: summary.events,
    readerDropped: summary.dropped,
    readerThreads: Object.keys(summary.threads).length,
    complete: summary.complete,
  });
} finally {
  await Promise.all(workers.map((w) => w.terminate()));
  rmSync(dir, { recursive: true, force: true });
}
