import { stopTracing, TargetError } from '../ipc/diagnostics-client.js';
import { positiveInt } from './cli-args.js';
import { CliError } from './cli-error.js';
import { defineCommand } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { formatBytes } from './format-size.js';
import { writeOut } from './output.js';

export const stopCommand = defineCommand({
  name: 'stop',
  summary: 'stop a session running in process N',
  description: 'Stops a session running in another process (its id as `tracepipe ps` lists it): the process flushes and closes it.',
  positionals: [],
  options: {
    pid: { type: 'string', value: 'N', required: true, description: 'the process' },
    session: { type: 'string', value: 'ID', required: true, description: 'the session, as `tracepipe ps` lists it' },
  },
  examples: [{ args: ['--pid', '4242', '--session', '1'], does: 'stops session 1 of process 4242' }],
  run: ({ values }) => stop(positiveInt('pid', values.pid), positiveInt('session', values.session)),
});

async function stop(pid: number, id: number): Promise<number> {
  const r = await stopTracing(pid, id).catch((e: unknown) => {
    throw e instanceof TargetError ? new CliError(e.message, 1) : e;
  });
  const counts = `${countOf(r.eventsWritten, 'event')}, ${r.eventsDropped.toLocaleString('en-US')} dropped, ${formatBytes(r.bytesWritten)}`;
  if (r.status === 'failed') {
    await writeOut(`session ${id} of process ${pid} had failed (${r.error}): ${counts}\n`);
    return 1;
  }
  await writeOut(`stopped session ${id} of process ${pid}: ${counts}\n`);
  return 0;
}
