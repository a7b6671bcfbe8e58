import type { CommandGroup } from '../command/command-spec.js';
import { gcdumpCollectCommand } from './collect-command.js';
import { gcdumpConvertCommand } from './convert-command.js';
import { gcdumpDiffCommand } from './diff-command.js';
import { gcdumpReportCommand } from './report-command.js';

export const gcdumpCommand: CommandGroup = {
  name: 'gcdump',
  summary: 'heap snapshots of a running process: collect, report, diff, convert',
  description: 'Heap snapshots of a running process, as .gcdump files (docs/GCDUMP.md has the file format).',
  subcommands: [gcdumpCollectCommand, gcdumpReportCommand, gcdumpDiffCommand, gcdumpConvertCommand],
};
