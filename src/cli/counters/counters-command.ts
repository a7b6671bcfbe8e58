import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { RUNTIME_COUNTERS } from '../../providers/counters/runtime-counter-catalog.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import { writeOut } from '../output.js';
import { PACE_PROVIDER } from './counter-board.js';
import { CounterSession, type CounterTarget } from './counter-session.js';
import { collect, type CollectFormat } from './counters-collect.js';
import { liveCounters, printCounters } from './counters-list.js';
import { monitor } from './counters-monitor.js';

export const countersUsage = 'tracepipe counters monitor | collect | list     live counters of a running process (--help: options)';

const help = `usage: tracepipe counters monitor (--pid N | -- CMD ARGS...) [--counters LIST] [--refresh 1s]
       tracepipe counters collect (--pid N | -- CMD ARGS...) [--format csv|json] [-o FILE] [--duration 30s] [--counters LIST] [--refresh 1s]
       tracepipe counters list [--pid N]

  --counters LIST    providers whose counters to show, comma separated (default Runtime.Counters);
                     each may be a full provider spec (Name:Keywords:Level)
  --refresh TIME     how often the figures are published and shown (default 1s; 10ms to 1h)
  --format csv|json  collect: csv (time,provider,name,value,unit) or JSON lines (default csv)
  -o, --output FILE  collect: where to write (default counters.csv or counters.json)
  --duration TIME    collect: stop after TIME; Ctrl-C stops too

monitor keys: p pauses, r resumes, q or Ctrl-C quits (the target's session stops).
`;

/** The providers shown, and the session's provider spec: Runtime.Counters always paces the intervals. */
function providerSpec(list: string, refreshMs: number, withStalls: boolean): { shown: Set<string>; spec: string } {
  const items = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new CliError('--counters needs at least one provider name');
  const shown = new Set(items.map((s) => s.split(':')[0]!));
  const others = items.filter((s) => s.split(':')[0] !== PACE_PROVIDER);
  const spec = [`${PACE_PROVIDER}:*:5:IntervalSec=${refreshMs / 1000}`, ...(withStalls ? ['Runtime.EventLoop:0x2:3'] : []), ...others];
  return { shown, spec: spec.join(',') };
}

function target(values: Record<string, unknown>, command: readonly string[], needed: boolean): CounterTarget | undefined {
  const pid = values.pid as string | undefined;
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

export async function countersCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '-h' || verb === '--help') {
    await writeOut(help);
    return verb ? 0 : 2;
  }
  if (verb !== 'monitor' && verb !== 'collect' && verb !== 'list') throw new CliError(`unknown counters command '${verb}'; use monitor, collect or list`);
  const dash = rest.indexOf('--');
  const command = dash < 0 ? [] : rest.slice(dash + 1);
  const { values } = parseArgs({
    args: dash < 0 ? rest : rest.slice(0, dash),
    options: {
      pid: { type: 'string' },
      counters: { type: 'string' },
      refresh: { type: 'string' },
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      duration: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    await writeOut(help);
    return 0;
  }
  const refreshMs = parseDuration(values.refresh ?? '1s', '--refresh');
  if (refreshMs < 10 || refreshMs > 3_600_000) throw new CliError(`--refresh must be between 10ms and 1h, not '${values.refresh}'`);
  const { shown, spec } = providerSpec(values.counters ?? PACE_PROVIDER, refreshMs, verb === 'monitor');

  if (verb === 'list') {
    const t = target(values, command, false);
    if (!t) {
      await printCounters(RUNTIME_COUNTERS.map((c) => ({ provider: PACE_PROVIDER, ...c })));
      return 0;
    }
    const session = await CounterSession.open(t, `${PACE_PROVIDER}:*:5:IntervalSec=3600`, 'ignore');
    await printCounters(await liveCounters(session));
    return 0;
  }
  const t = target(values, command, true)!;
  if (verb === 'monitor') {
    const session = await CounterSession.open(t, spec, process.stdout.isTTY ? 'ignore' : 'inherit');
    await monitor(session, shown, refreshMs);
    return childStatus(session);
  }
  const format = (values.format ?? 'csv') as CollectFormat;
  if (format !== 'csv' && format !== 'json') throw new CliError(`--format must be csv or json, not '${values.format}'`);
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration);
  const session = await CounterSession.open(t, spec, 'inherit');
  const code = await collect(session, shown, format, values.output ?? `counters.${format}`, durationMs);
  return code || childStatus(session);
}
