import { closeSync, writeSync } from 'node:fs';
import { dumpRecorder, TargetError } from '../ipc/diagnostics-client.js';
import { readTrace } from '../format/trace-reader.js';
import { openPrivateFileSync } from '../sinks/private-file.js';
import { positiveInt } from './cli-args.js';
import { CliError } from './cli-error.js';
import { parseDuration } from './duration-option.js';
import { type CommandGroup, defineCommand, QUIET_OPTION } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { writeOut } from './output.js';
import { ProgressLine } from './progress-line.js';

/**
 * By default, a target that sends nothing for this long is not dumping (stopped, hung): the target
 * itself gives up a dump to a client 30 s after the request, so a live one never goes quiet for longer.
 */
const SILENCE_TEXT = '35s';

function defaultPath(pid: number): string {
  return `tracepipe-flight-${pid}-${new Date().toISOString().replace(/[-:.]/g, '')}.tptrace`;
}

export const recorderDumpCommand = defineCommand({
  name: 'recorder dump',
  summary: 'write the flight recorder of process N (its newest events) to a trace file',
  description: 'Writes what the flight recorder (a ring session) of a running process holds, its newest events, to a trace file.',
  positionals: [],
  options: {
    pid: { type: 'string', value: 'N', required: true, description: 'the process (see `tracepipe ps`)' },
    output: { type: 'string', short: 'o', value: 'FILE', defaultText: 'tracepipe-flight-<pid>-<time>.tptrace', description: 'where to write the trace' },
    session: { type: 'string', value: 'ID', defaultText: 'the process\'s flight recorder, when it has one', description: 'which ring session, when the process has several' },
    timeout: { type: 'string', value: 'TIME', default: SILENCE_TEXT, description: 'give up when the process sends nothing for TIME (500ms, 10s, 5m; a bare number is seconds)' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['--pid', '4242'], does: 'the newest events of process 4242' },
    { args: ['--pid', '4242', '-o', 'crash.tptrace'], does: 'the same, into crash.tptrace' },
  ],
  run: ({ values }) =>
    dumpFlightRecorder(positiveInt('pid', values.pid), values.session === undefined ? 0 : positiveInt('session', values.session), values.output, parseDuration(values.timeout, '--timeout'), values.quiet),
});

export const recorderCommand: CommandGroup = {
  name: 'recorder',
  summary: 'write the flight recorder of a running process to a trace file',
  subcommands: [recorderDumpCommand],
};

async function dumpFlightRecorder(pid: number, session: number, output: string | undefined, silenceMs: number, quiet: boolean): Promise<number> {
  const path = output ?? defaultPath(pid);
  const stream = await dumpRecorder(pid, session).catch((e: unknown) => {
    throw e instanceof TargetError ? new CliError(e.message, 1) : e;
  });
  // Traces hold argv, paths and URLs: only their owner reads them.
  const fd = openPrivateFileSync(path);
  // A big ring takes seconds to arrive, and the file is read back after it.
  const progress = new ProgressLine(`receiving the flight recorder of process ${pid}`, { quiet });
  let received = 0;
  let silent = false;
  const silence = setTimeout(() => {
    silent = true;
    stream.close();
  }, silenceMs);
  try {
    for await (const chunk of stream) {
      silence.refresh();
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off, chunk.length - off);
      received += chunk.length;
      progress.update({ bytes: received });
    }
  } catch (e) {
    if (!silent) throw e;
  } finally {
    clearTimeout(silence);
    closeSync(fd);
    progress.stop();
  }
  if (silent) throw new CliError(`process ${pid} sent nothing for ${silenceMs % 1000 === 0 ? `${silenceMs / 1000} s` : `${silenceMs} ms`}; ${path} holds what arrived`, 1);
  const checking = new ProgressLine(`checking ${path}`, { quiet }).followTraceReads();
  let s;
  try {
    s = await readTrace(path).summary();
  } finally {
    checking.stop();
  }
  if (!s.complete) throw new CliError(`the dump of process ${pid} is incomplete (${s.error?.message ?? 'no end of stream'}); ${path} holds what arrived`, 1);
  const lost = s.dropReasons.overwritten > 0 ? `, ${s.dropReasons.overwritten.toLocaleString('en-US')} older overwritten` : '';
  await writeOut(`dumped the flight recorder of process ${pid} to ${path}: ${countOf(s.events, 'event')}${lost}, ${s.dropped.toLocaleString('en-US')} lost in all\n`);
  return 0;
}
