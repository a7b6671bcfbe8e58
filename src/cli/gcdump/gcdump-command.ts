import type { CommandGroup } from '../command/command-spec.js';
import { gcdumpCollectCommand } from './collect-command.js';
import { gcdumpConvertCommand } from './convert-command.js';
import { gcdumpDiffCommand } from './diff-command.js';
import { gcdumpLeaksCommand } from './leaks-command.js';
import { gcdumpPathsCommand } from './paths-command.js';
import { gcdumpReportCommand } from './report-command.js';

export const gcdumpCommand: CommandGroup = {
  name: 'gcdump',
  summary: 'heap snapshots of a running process: collect, report, paths, leaks, diff, convert',
  description: 'Heap snapshots of a running process, as .gcdump files (docs/GCDUMP.md has the file format).',
  subcommands: [gcdumpCollectCommand, gcdumpReportCommand, gcdumpPathsCommand, gcdumpLeaksCommand, gcdumpDiffCommand, gcdumpConvertCommand],
};
