// Writes the trace every reader variant reads, through a real session (drain, sequence points,
// several threads), and the same events as JSONL with tracepipe's own dump for the JSONL peer.
import { spawnSync } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { startSession } from '../../dist/index.js';
import { PROVIDERS } from '../support/tick-provider.mjs';
import { reportResult } from '../support/variant-process.mjs';
import { produce } from './producer.mjs';

const [file, jsonl, perThreadArg, workersArg] = process.argv.slice(2);
const perThread = Number(perThreadArg);
const workers = Number(workersArg);

const session = await startSession({ providers: PROVIDERS, output: file, bufferingMode: 'block', bufferSizeMB: 64 });
const done = Array.from({ length: workers }, () => new Promise((resolve, reject) => {
  const w = new Worker(new URL('./producer.mjs', import.meta.url), { workerData: perThread });
  w.on('exit', resolve);
  w.on('error', reject);
}));
await produce(perThread);
await Promise.all(done);
const r = await session.stop();
const fd = openSync(jsonl, 'w');
const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const d = spawnSync(process.execPath, [cli, 'dump', file, '--format', 'jsonl'], { stdio: ['ignore', fd, 'inherit'] });
closeSync(fd);
if (d.status !== 0) throw new Error(`dump exited with ${d.status}`);
reportResult({ events: r.eventsWritten, dropped: r.eventsDropped, bytes: r.bytesWritten });
