import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { simulateRequests } from '../demo/sample-work.js';
import { readTrace } from '../format/trace-reader.js';
import { startSession } from '../session/session.js';
import { CliError } from './cli-error.js';
import { countOf } from './format-count.js';
import { formatStats } from './stats-command.js';
import { writeOut } from './output.js';

export const demoUsage = 'tracepipe demo [-o FILE] [--duration MS]       trace a sample app (main + 2 workers) and print its stats';

export async function demoCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { output: { type: 'string', short: 'o' }, duration: { type: 'string', default: '2000' } },
  });
  const durationMs = Number(values.duration);
  if (!Number.isFinite(durationMs) || durationMs <= 0) throw new CliError('--duration must be a positive number of milliseconds');
  const file = values.output ?? join(tmpdir(), `tracepipe-demo-${process.pid}.tptrace`);
  const session = await startSession({ providers: 'Demo.App:0x3:5', output: file, bufferSizeMB: 16 });
  await writeOut(`tracing a sample app (main thread + 2 worker threads) for ${durationMs} ms into ${file}\n`);
  const workers = [1, 2].map((seed) => new Worker(new URL('../workers/demo-worker.js', import.meta.url), { workerData: { durationMs, seed } }));
  const handled = await Promise.all([
    simulateRequests(durationMs, 7),
    ...workers.map((w) => new Promise<number>((resolve, reject) => w.once('message', resolve).once('error', reject))),
  ]);
  const result = await session.stop();
  await writeOut(`handled ${handled.join(' + ')} requests; session wrote ${countOf(result.eventsWritten, 'event')}, dropped ${result.eventsDropped}\n\n`);
  await writeOut(formatStats(await readTrace(file).summary()));
  await writeOut(`\nnext: tracepipe dump ${file} | head\n`);
  return result.status === 'stopped' ? 0 : 1;
}
