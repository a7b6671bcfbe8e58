import { CliError } from '../cli-error.js';
import { writeOut } from '../output.js';
import { collectHelp, gcdumpCollect } from './collect-command.js';
import { convertHelp, gcdumpConvert } from './convert-command.js';
import { diffHelp, gcdumpDiff } from './diff-command.js';
import { gcdumpLeaks, leaksHelp } from './leaks-command.js';
import { gcdumpPaths, pathsHelp } from './paths-command.js';
import { gcdumpReport, reportHelp } from './report-command.js';

export const gcdumpUsage = 'tracepipe gcdump collect|report|paths|leaks|diff|convert ...   heap snapshots of a running process (gcdump --help)';

const subcommands: Record<string, { run: (argv: string[]) => Promise<number>; help: string }> = {
  collect: { run: gcdumpCollect, help: collectHelp },
  report: { run: gcdumpReport, help: reportHelp },
  paths: { run: gcdumpPaths, help: pathsHelp },
  leaks: { run: gcdumpLeaks, help: leaksHelp },
  diff: { run: gcdumpDiff, help: diffHelp },
  convert: { run: gcdumpConvert, help: convertHelp },
};

const help = `${Object.values(subcommands).map((s) => s.help.split('\n')[0]).join('\n')}\n\nSee docs/GCDUMP.md for the .gcdump file format.\n`;

export async function gcdumpCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    await writeOut(help);
    return name ? 0 : 2;
  }
  const sub = subcommands[name];
  if (!sub) throw new CliError(`unknown gcdump command '${name}'; try 'tracepipe gcdump --help'`);
  return sub.run(rest);
}
