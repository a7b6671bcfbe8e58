import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { simulateRequests } from '../demo/sample-work.js';
import { readTrace } from '../format/trace-reader.js';
import { startSession } from '../session/session.js';
import { CliError } from './cli-error.js';
import { defineCommand, QUIET_OPTION } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { formatStats } from './stats-command.js';
import { writeOut } from './output.js';
import { ProgressLine } from './progress-line.js';

export const demoCommand = defineCommand({
  name: 'demo',
  summary: 'trace a sample app (main + 2 workers) and print its stats',
  positionals: [],
  options: {
    output: { type: 'string', short: 'o', value: 'FILE', defaultText: 'tracepipe-demo-<pid>.tptrace in the temporary directory', description: 'where to write the trace' },
    duration: { type: 'string', value: 'MS', default: '2000', description: 'how long the sample app runs, in milliseconds' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: [], does: 'two seconds of a sample app, then its stats' },
    { args: ['-o', 'demo.tptrace', '--duration', '500'], does: 'half a second, into demo.tptrace' },
  ],
  run: ({ values }) => demo(values),
});

async function demo(values: { output: string | undefined; duration: string; quiet: boolean }): Promise<number> {
  const durationMs = Number(values.duration);
  if (!Number.isFinite(durationMs) || durationMs <= 0) throw new CliError('--duration must be a positive number of milliseconds');
  const file = values.output ?? join(tmpdir(), `tracepipe-demo-${process.pid}.tptrace`);
  const session = await startSession({ providers: 'Demo.App:0x3:5', output: file, bufferSizeMB: 16 });
  await writeOut(`tracing a sample app (main thread + 2 worker threads) for ${durationMs} ms into ${file}\n`);
  const workers = [1, 2].map((seed) => new Worker(new URL('../workers/demo-worker.js', import.meta.url), { workerData: { durationMs, seed } }));
  const progress = new ProgressLine(`running the sample app for ${durationMs} ms`, { quiet: values.quiet });
  let handled: number[];
  let result;
  try {
    handled = await Promise.all([
      simulateRequests(durationMs, 7),
      ...workers.map((w) => new Promise<number>((resolve, reject) => w.once('message', resolve).once('error', reject))),
    ]);
    progress.update({ doing: 'stopping the session' });
    result = await session.stop();
  } finally {
    progress.stop();
  }
  await writeOut(`handled ${handled.join(' + ')} requests; session wrote ${countOf(result.eventsWritten, 'event')}, dropped ${result.eventsDropped}\n\n`);
  await writeOut(formatStats(await readTrace(file).summary()));
  await writeOut(`\nnext: tracepipe dump ${file} | head\n`);
  return result.status === 'stopped' ? 0 : 1;
}
