import type { CliEntry } from './command/command-spec.js';
import { collectCommand } from './collect-command.js';
import { convertCommand } from './convert/convert-command.js';
import { countersCommand } from './counters/counters-command.js';
import { demoCommand } from './demo-command.js';
import { dumpCommand } from './dump-command.js';
import { explainCommand } from './explain-command.js';
import { gcdumpCommand } from './gcdump/gcdump-command.js';
import { psCommand } from './ps-command.js';
import { queryCommand } from './query/query-command.js';
import { recorderCommand } from './recorder-command.js';
import { reportCommand } from './report-command.js';
import { statsCommand } from './stats-command.js';
import { stopCommand } from './stop-command.js';

/** Every command of `tracepipe`, in the order `tracepipe --help` lists them. */
export const COMMANDS: readonly CliEntry[] = [
  dumpCommand,
  statsCommand,
  reportCommand,
  explainCommand,
  convertCommand,
  queryCommand,
  demoCommand,
  psCommand,
  collectCommand,
  stopCommand,
  recorderCommand,
  gcdumpCommand,
  countersCommand,
];
