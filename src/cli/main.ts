#!/usr/bin/env node
import './no-pretenuring.js'; // first: before the tools allocate
import { ExportTargetError } from '../export/export-output.js';
import { ExportInputError } from '../export/export-writer.js';
import { TraceFormatError } from '../format/format-error.js';
import { GcdumpFileError } from '../heap/gcdump-file.js';
import { CliError, UsageError } from './cli-error.js';
import { writeErr } from './output.js';
import { SessionError } from '../session/session.js';
import { ProviderSpecError } from '../session/provider-spec.js';
import { COMMANDS } from './command-list.js';
import { dispatch } from './command/command-dispatch.js';

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-v') {
    const { tracepipeVersion } = await import('../session/version.js');
    process.stdout.write(`${tracepipeVersion()}\n`);
    return 0;
  }
  return dispatch(COMMANDS, argv);
}

/** Mistakes a user can fix, as opposed to bugs: they get one line and no stack trace. */
function userError(e: unknown): { message: string; exitCode: number; usage?: string } | undefined {
  if (e instanceof UsageError) return { message: e.message, exitCode: e.exitCode, usage: e.usage };
  if (e instanceof CliError) return { message: e.message, exitCode: e.exitCode };
  if (e instanceof TraceFormatError || e instanceof GcdumpFileError || e instanceof ExportInputError) return { message: e.message, exitCode: 1 };
  if (e instanceof ExportTargetError) return { message: e.message, exitCode: 2 };
  if (e instanceof SessionError || e instanceof ProviderSpecError || e instanceof RangeError) return { message: (e as Error).message, exitCode: 2 };
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    const user = userError(e);
    if (user) {
      // One line says what is wrong (the first, should a message span lines); a usage error adds the command's usage.
      writeErr(`tracepipe: ${user.message.split('\n')[0]}\n${user.usage ? `${user.usage}\n` : ''}`);
      process.exitCode = user.exitCode;
    } else {
      writeErr(`tracepipe: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 70;
    }
  },
);
