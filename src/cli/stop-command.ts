import { parseArgs } from 'node:util';
import { stopTracing, TargetError } from '../ipc/diagnostics-client.js';
import { positiveInt } from './cli-args.js';
import { CliError } from './cli-error.js';
import { countOf } from './format-count.js';
import { formatBytes } from './format-size.js';
import { writeOut } from './output.js';

export const stopUsage = 'tracepipe stop --pid N --session ID          stop a session running in process N';

export async function stopCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { pid: { type: 'string' }, session: { type: 'string' } } });
  const pid = positiveInt('pid', values.pid, stopUsage);
  const id = positiveInt('session', values.session, stopUsage);
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
