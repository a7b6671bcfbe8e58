import { parseArgs } from 'node:util';
import { UsageError } from '../cli-error.js';
import { closestName } from './closest-name.js';
import { usageText } from './command-help.js';
import type { CommandSpec, OptionSpec, OptionValues, ParsedCommand } from './command-spec.js';

/** `-h` or `--help` anywhere before a `--`: the command shows its help instead of running. */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

/** The long option a message of node's parser is about: the first `--name` in it, or a `-x` mapped to its long name. */
function optionIn(message: string, options: Record<string, OptionSpec>): string {
  const long = /--([\w-]+)/.exec(message)?.[1];
  if (long) return `--${long}`;
  const short = /'-(\w)/.exec(message)?.[1];
  const named = Object.entries(options).find(([, o]) => o.short === short)?.[0];
  return named ? `--${named}` : `-${short ?? '?'}`;
}

/** Node's parser error, said in the command's terms (its own messages name node's API, not the command). */
function translate(e: unknown, spec: CommandSpec): UsageError {
  const code = (e as { code?: string }).code;
  const message = (e as Error).message;
  const fail = (text: string) => new UsageError(text, usageText(spec));
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const typed = /'([^']*)'/.exec(message)?.[1] ?? '?';
    const bare = typed.replace(/^--?/, '').split('=')[0]!;
    const names = Object.keys(spec.options);
    const guess = typed.startsWith('--') ? closestName(bare, names) : undefined;
    return fail(`unknown option ${typed} for ${spec.name}${guess ? `; did you mean --${guess}?` : ''}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = optionIn(message, spec.options);
    const o = spec.options[flag.slice(2)];
    if (o?.type === 'boolean') return fail(`option ${flag} of ${spec.name} takes no value`);
    if (/ambiguous/.test(message)) return fail(`option ${flag} of ${spec.name} needs a value; one that starts with '-' is written ${flag}=${o?.value ?? 'VALUE'}`);
    return fail(`option ${flag} of ${spec.name} needs a value (${o?.value ?? 'VALUE'})`);
  }
  throw e;
}

/** Checks the count of positionals against the declaration. */
function checkPositionals(spec: CommandSpec, positionals: readonly string[]): void {
  const declared = spec.positionals;
  const min = declared.filter((p) => !p.optional).length;
  const max = declared.some((p) => p.variadic) ? Infinity : declared.length;
  if (positionals.length < min) {
    const missing = declared.filter((p) => !p.optional).slice(positionals.length).map((p) => p.name);
    throw new UsageError(`missing ${missing.join(' and ')} for ${spec.name}`, usageText(spec));
  }
  if (positionals.length > max) {
    const extra = positionals.slice(max).map((a) => `'${a}'`).join(', ');
    throw new UsageError(`too many arguments for ${spec.name}: ${extra} (it takes ${max === 0 ? 'none' : declared.map((p) => p.name).join(' ')})`, usageText(spec));
  }
}

/** Parses `argv` by the command's declaration (through node's util.parseArgs); a mismatch throws a UsageError. */
export function parseCommand<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>, argv: readonly string[]): ParsedCommand<O> {
  const dash = spec.rest ? argv.indexOf('--') : -1;
  const args = dash < 0 ? argv : argv.slice(0, dash);
  const rest = dash < 0 ? [] : argv.slice(dash + 1);
  const options = Object.fromEntries(
    Object.entries(spec.options).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.type === 'boolean' ? { default: false } : o.default !== undefined ? { default: o.default } : {}) },
    ]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw translate(e, spec);
  }
  checkPositionals(spec, parsed.positionals);
  for (const [name, o] of Object.entries(spec.options)) {
    if (o.required && parsed.values[name] === undefined) throw new UsageError(`missing --${name} ${o.value ?? 'VALUE'} for ${spec.name}`, usageText(spec));
  }
  return { values: parsed.values as OptionValues<O>, positionals: parsed.positionals, rest };
}
