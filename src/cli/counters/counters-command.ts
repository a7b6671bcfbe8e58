import { constants } from 'node:os';
import { RUNTIME_COUNTERS } from '../../providers/counters/runtime-counter-catalog.js';
import { CliError } from '../cli-error.js';
import { type CommandGroup, defineCommand, type OptionSpec } from '../command/command-spec.js';
import { parseDuration } from '../duration-option.js';
import { PACE_PROVIDER } from './counter-board.js';
import { CounterSession, type CounterTarget } from './counter-session.js';
import { collect, type CollectFormat } from './counters-collect.js';
import { liveCounters, printCounters } from './counters-list.js';
import { monitor } from './counters-monitor.js';

/** The providers shown, and the session's provider spec: Runtime.Counters always paces the intervals. */
function providerSpec(list: string, refreshMs: number, withStalls: boolean): { shown: Set<string>; spec: string } {
  const items = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new CliError('--counters needs at least one provider name');
  const shown = new Set(items.map((s) => s.split(':')[0]!));
  const others = items.filter((s) => s.split(':')[0] !== PACE_PROVIDER);
  const spec = [`${PACE_PROVIDER}:*:5:IntervalSec=${refreshMs / 1000}`, ...(withStalls ? ['Runtime.EventLoop:0x2:3'] : []), ...others];
  return { shown, spec: spec.join(',') };
}

function target(values: { readonly pid: string | undefined }, command: readonly string[], needed: boolean): CounterTarget | undefined {
  const pid = values.pid;
  if (pid !== undefined && command.length > 0) throw new CliError('give either --pid N or -- CMD ARGS..., not both');
  if (pid !== undefined) {
    if (!/^\d+$/.test(pid) || Number(pid) <= 0) throw new CliError(`--pid must be a process id, not '${pid}'`);
    return { pid: Number(pid) };
  }
  if (command.length > 0) return { command };
  if (needed) throw new CliError('give --pid N or -- CMD ARGS...');
  return undefined;
}

/**
 * After the session: a launched command that ended by itself gives its exit status (as a shell
 * reports it); one still running (the user quit) is ended with SIGTERM, and the status is 0.
 */
async function childStatus(session: CounterSession): Promise<number> {
  const child = session.child;
  if (!child) return 0;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    return 0;
  }
  return child.signalCode ? 128 + (constants.signals[child.signalCode] ?? 0) : (child.exitCode ?? 1);
}

const TARGET_OPTIONS = {
  pid: { type: 'string', value: 'N', description: 'the process to attach to (started with --import tracepipe/register)', defaultText: 'none: give --pid or -- CMD ARGS...' },
} as const satisfies Record<string, OptionSpec>;

const SHOWN_OPTIONS = {
  counters: { type: 'string', value: 'LIST', description: 'providers whose counters to show, comma separated; each may be a full provider spec (Name:Keywords:Level)', default: PACE_PROVIDER },
  refresh: { type: 'string', value: 'TIME', description: 'how often the figures are published and shown (10ms to 1h)', default: '1s' },
} as const satisfies Record<string, OptionSpec>;

const LAUNCH = { name: 'CMD ARGS...', description: 'a command to launch and watch (node app.js, ...); its exit status is the command\'s' } as const;

function refreshOf(text: string): number {
  const ms = parseDuration(text, '--refresh');
  if (ms < 10 || ms > 3_600_000) throw new CliError(`--refresh must be between 10ms and 1h, not '${text}'`);
  return ms;
}

export const countersMonitorCommand = defineCommand({
  name: 'counters monitor',
  summary: 'a live screen of a process\'s counters, redrawn in place',
  description:
    'A live screen of a running process\'s CPU, memory, heap spaces, GC by kind, event loop and the application\'s counters,\n' +
    'redrawn in place on a terminal (plain timestamped lines otherwise). Keys: p pauses, r resumes, q or Ctrl-C quits\n' +
    '(the target\'s session stops).',
  positionals: [],
  options: { ...TARGET_OPTIONS, ...SHOWN_OPTIONS },
  rest: LAUNCH,
  forms: ['--pid N [options]', '[options] -- CMD ARGS...'],
  examples: [
    { args: ['--pid', '4242'], does: 'watch process 4242, refreshed every second' },
    { args: ['--counters', 'Runtime.Counters,Demo.App', '--refresh', '2s', '--', 'node', 'app.js'], does: 'launch node app.js and watch its runtime and application counters' },
  ],
  async run({ values, rest }) {
    const refreshMs = refreshOf(values.refresh);
    const { shown, spec } = providerSpec(values.counters, refreshMs, true);
    const session = await CounterSession.open(target(values, rest, true)!, spec, process.stdout.isTTY ? 'ignore' : 'inherit');
    await monitor(session, shown, refreshMs);
    return childStatus(session);
  },
});

export const countersCollectCommand = defineCommand({
  name: 'counters collect',
  summary: 'counters to a CSV or JSON-lines file, one row per counter per interval',
  description: 'Writes one row per counter per interval; --duration ends it, Ctrl-C or the target\'s exit too, and the file is complete either way.',
  positionals: [],
  options: {
    ...TARGET_OPTIONS,
    ...SHOWN_OPTIONS,
    format: { type: 'string', value: 'csv|json', description: 'csv (time,provider,name,value,unit) or JSON lines', default: 'csv' },
    output: { type: 'string', short: 'o', value: 'FILE', description: 'where to write', defaultText: 'counters.csv or counters.json' },
    duration: { type: 'string', value: 'TIME', description: 'stop after TIME (500ms, 10s, 5m, 1h)', defaultText: 'until Ctrl-C or the target exits' },
  },
  rest: LAUNCH,
  forms: ['--pid N [options]', '[options] -- CMD ARGS...'],
  examples: [
    { args: ['--pid', '4242', '--format', 'json', '-o', 'counters.jsonl', '--duration', '30s'], does: 'thirty seconds of process 4242 as JSON lines' },
    { args: ['-o', 'run.csv', '--', 'node', 'app.js'], does: 'launch node app.js and record its counters until it exits' },
  ],
  async run({ values, rest }) {
    const refreshMs = refreshOf(values.refresh);
    const { shown, spec } = providerSpec(values.counters, refreshMs, false);
    const format = values.format as CollectFormat;
    if (format !== 'csv' && format !== 'json') throw new CliError(`--format must be csv or json, not '${values.format}'`);
    const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration);
    const session = await CounterSession.open(target(values, rest, true)!, spec, 'inherit');
    const code = await collect(session, shown, format, values.output ?? `counters.${format}`, durationMs);
    return code || childStatus(session);
  },
});

export const countersListCommand = defineCommand({
  name: 'counters list',
  summary: 'the known counters with their units, and a live process\'s application counters',
  positionals: [],
  options: { pid: { type: 'string', value: 'N', description: 'also list the counters a running process defines', defaultText: 'the runtime counters only' } },
  forms: ['[--pid N]'],
  examples: [
    { args: [], does: 'the runtime counters, with units and descriptions' },
    { args: ['--pid', '4242'], does: 'those and the application counters of process 4242' },
  ],
  async run({ values }) {
    const t = target(values, [], false);
    if (!t) {
      await printCounters(RUNTIME_COUNTERS.map((c) => ({ provider: PACE_PROVIDER, ...c })));
      return 0;
    }
    const session = await CounterSession.open(t, `${PACE_PROVIDER}:*:5:IntervalSec=3600`, 'ignore');
    await printCounters(await liveCounters(session));
    return 0;
  },
});

export const countersCommand: CommandGroup = {
  name: 'counters',
  summary: 'live counters of a running process: monitor, collect, list',
  description: 'Live counters of a running process (docs/COUNTERS.md): a refreshing screen, a file of rows, or the list of what there is.',
  subcommands: [countersMonitorCommand, countersCollectCommand, countersListCommand],
};
