import { CliError, UsageError } from '../cli-error.js';
import { writeOut } from '../output.js';
import { closestName } from './closest-name.js';
import { commandHelp, groupHelp, mainHelp, usageText } from './command-help.js';
import { asksForHelp, parseCommand } from './command-parse.js';
import { type CliEntry, type CommandGroup, isGroup } from './command-spec.js';

const lastWord = (name: string): string => name.slice(name.lastIndexOf(' ') + 1);

/** The entry called `name` among `entries` (a group's subcommands when `group` is given), or a one-line error with the nearest name. */
function find(entries: readonly CliEntry[], name: string, group?: CommandGroup): CliEntry {
  const found = entries.find((e) => lastWord(e.name) === name);
  if (found) return found;
  const guess = closestName(name, entries.map((e) => lastWord(e.name)));
  const where = group ? `${group.name} ` : '';
  throw new CliError(`unknown ${where}command '${name}'; ${guess ? `did you mean '${where}${guess}'? ('tracepipe ${where}--help' lists them)` : `try 'tracepipe ${where}--help'`}`);
}

function helpOf(entry: CliEntry): string {
  return isGroup(entry) ? groupHelp(entry) : commandHelp(entry);
}

/** `tracepipe help [COMMAND [SUBCOMMAND]]`: the help of what the names lead to. */
async function help(entries: readonly CliEntry[], names: readonly string[]): Promise<number> {
  if (names.length === 0) {
    await writeOut(mainHelp(entries));
    return 0;
  }
  let entry = find(entries, names[0]!);
  for (const name of names.slice(1)) {
    if (!isGroup(entry)) throw new CliError(`'${entry.name}' has no subcommand '${name}'; try 'tracepipe help ${entry.name}'`);
    entry = find(entry.subcommands, name, entry);
  }
  await writeOut(helpOf(entry));
  return 0;
}

async function run(entry: CliEntry, argv: readonly string[]): Promise<number> {
  if (!isGroup(entry)) {
    if (asksForHelp(argv)) {
      await writeOut(commandHelp(entry));
      return 0;
    }
    return entry.run(parseCommand(entry, argv));
  }
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError(`missing command for ${entry.name}`, usageText(entry));
  if (name === '-h' || name === '--help') {
    await writeOut(groupHelp(entry));
    return 0;
  }
  if (name === 'help') return help([entry], [lastWord(entry.name), ...rest]);
  return run(find(entry.subcommands, name, entry), rest);
}

/** Runs the command line `argv` (without `tracepipe`) against the declared commands; resolves to the exit code. */
export async function dispatch(entries: readonly CliEntry[], argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help') {
    await writeOut(mainHelp(entries));
    return name === undefined ? 2 : 0;
  }
  if (name === 'help') return help(entries, rest);
  return run(find(entries, name), rest);
}
