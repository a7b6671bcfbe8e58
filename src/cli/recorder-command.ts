import { closeSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { dumpRecorder, TargetError } from '../ipc/diagnostics-client.js';
import { readTrace } from '../format/trace-reader.js';
import { openPrivateFileSync } from '../sinks/private-file.js';
import { positiveInt } from './cli-args.js';
import { CliError } from './cli-error.js';
import { countOf } from './format-count.js';
import { writeOut } from './output.js';

export const recorderUsage = 'tracepipe recorder dump --pid N [-o FILE]    write the flight recorder of process N (its newest events) to a trace file';

/**
 * A target that sends nothing for this long is not dumping (stopped, hung): the target itself gives up
 * a dump to a client 30 s after the request, so a live one never goes quiet for longer.
 */
const SILENCE_MS = 35_000;

function defaultPath(pid: number): string {
  return `tracepipe-flight-${pid}-${new Date().toISOString().replace(/[-:.]/g, '')}.tptrace`;
}

export async function recorderCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { pid: { type: 'string' }, output: { type: 'string', short: 'o' }, session: { type: 'string' } },
  });
  if (positionals.length !== 1 || positionals[0] !== 'dump') throw new CliError(`usage: ${recorderUsage}`);
  const pid = positiveInt('pid', values.pid, recorderUsage);
  const session = values.session === undefined ? 0 : positiveInt('session', values.session, recorderUsage);
  const path = values.output ?? defaultPath(pid);
  const stream = await dumpRecorder(pid, session).catch((e: unknown) => {
    throw e instanceof TargetError ? new CliError(e.message, 1) : e;
  });
  // Traces hold argv, paths and URLs: only their owner reads them.
  const fd = openPrivateFileSync(path);
  let silent = false;
  const silence = setTimeout(() => {
    silent = true;
    stream.close();
  }, SILENCE_MS);
  try {
    for await (const chunk of stream) {
      silence.refresh();
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off, chunk.length - off);
    }
  } catch (e) {
    if (!silent) throw e;
  } finally {
    clearTimeout(silence);
    closeSync(fd);
  }
  if (silent) throw new CliError(`process ${pid} sent nothing for ${SILENCE_MS / 1000} s; ${path} holds what arrived`, 1);
  const s = await readTrace(path).summary();
  if (!s.complete) throw new CliError(`the dump of process ${pid} is incomplete (${s.error?.message ?? 'no end of stream'}); ${path} holds what arrived`, 1);
  const lost = s.dropReasons.overwritten > 0 ? `, ${s.dropReasons.overwritten.toLocaleString('en-US')} older overwritten` : '';
  await writeOut(`dumped the flight recorder of process ${pid} to ${path}: ${countOf(s.events, 'event')}${lost}, ${s.dropped.toLocaleString('en-US')} lost in all\n`);
  return 0;
}
