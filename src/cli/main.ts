#!/usr/bin/env node
import './no-pretenuring.js'; // first: before the tools allocate
import { ExportTargetError } from '../export/export-output.js';
import { ExportInputError } from '../export/export-writer.js';
import { TraceFormatError } from '../format/format-error.js';
import { GcdumpFileError } from '../heap/gcdump-file.js';
import { CliError } from './cli-error.js';
import { writeErr } from './output.js';
import { SessionError } from '../session/session.js';
import { ProviderSpecError } from '../session/provider-spec.js';
import { collectCommand, collectUsage } from './collect-command.js';
import { convertCommand, convertUsage } from './convert/convert-command.js';
import { countersCommand, countersUsage } from './counters/counters-command.js';
import { demoCommand, demoUsage } from './demo-command.js';
import { dumpCommand, dumpUsage } from './dump-command.js';
import { explainCommand, explainUsage } from './explain-command.js';
import { gcdumpCommand, gcdumpUsage } from './gcdump/gcdump-command.js';
import { reportCommand, reportUsage } from './report-command.js';
import { psCommand, psUsage } from './ps-command.js';
import { queryCommand, queryUsage } from './query/query-command.js';
import { recorderCommand, recorderUsage } from './recorder-command.js';
import { statsCommand, statsUsage } from './stats-command.js';
import { stopCommand, stopUsage } from './stop-command.js';

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, { run: Command; usage: string }> = {
  dump: { run: dumpCommand, usage: dumpUsage },
  stats: { run: statsCommand, usage: statsUsage },
  report: { run: reportCommand, usage: reportUsage },
  explain: { run: explainCommand, usage: explainUsage },
  convert: { run: convertCommand, usage: convertUsage },
  query: { run: queryCommand, usage: queryUsage },
  demo: { run: demoCommand, usage: demoUsage },
  ps: { run: psCommand, usage: psUsage },
  collect: { run: collectCommand, usage: collectUsage },
  stop: { run: stopCommand, usage: stopUsage },
  recorder: { run: recorderCommand, usage: recorderUsage },
  gcdump: { run: gcdumpCommand, usage: gcdumpUsage },
  counters: { run: countersCommand, usage: countersUsage },
};

function help(): string {
  return `usage: tracepipe <command> [options]\n\n${Object.values(commands).map((c) => `  ${c.usage}`).join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(help());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    const { TRACEPIPE_VERSION } = await import('../session/version.js');
    process.stdout.write(`${TRACEPIPE_VERSION}\n`);
    return 0;
  }
  const cmd = commands[name];
  if (!cmd) throw new CliError(`unknown command '${name}'; try 'tracepipe --help'`);
  return cmd.run(rest);
}

/** Mistakes a user can fix, as opposed to bugs: they get one line and no stack trace. */
function userError(e: unknown): { message: string; exitCode: number } | undefined {
  if (e instanceof CliError) return { message: e.message, exitCode: e.exitCode };
  if (e instanceof TraceFormatError || e instanceof GcdumpFileError || e instanceof ExportInputError) return { message: e.message, exitCode: 1 };
  if (e instanceof ExportTargetError) return { message: e.message, exitCode: 2 };
  if (e instanceof SessionError || e instanceof ProviderSpecError || e instanceof RangeError) return { message: (e as Error).message, exitCode: 2 };
  const code = (e as { code?: string })?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) return { message: (e as Error).message, exitCode: 2 };
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    const user = userError(e);
    if (user) {
      // Node's own argument errors can span lines; the first one says what is wrong.
      writeErr(`tracepipe: ${user.message.split('\n')[0]}\n`);
      process.exitCode = user.exitCode;
    } else {
      writeErr(`tracepipe: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 70;
    }
  },
);
