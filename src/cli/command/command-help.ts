import { type CliEntry, type CommandGroup, type CommandSpec, isGroup, type OptionSpec } from './command-spec.js';

/** `FILE`, `[FILE]`, `FILE...` as the usage line shows a positional. */
function positionalText(p: CommandSpec['positionals'][number]): string {
  const name = p.variadic ? `${p.name}...` : p.name;
  return p.optional ? `[${name}]` : name;
}

/** `-o, --output FILE` or `--json`. */
function optionText(name: string, o: OptionSpec): string {
  const flag = `${o.short ? `-${o.short}, ` : ''}--${name}`;
  return o.type === 'string' ? `${flag} ${o.value ?? 'VALUE'}` : flag;
}

/** How the usage line names a required option: its short form when it has one (`-o OUT`), else its long one. */
function requiredText(name: string, o: OptionSpec): string {
  return `${o.short ? `-${o.short}` : `--${name}`} ${o.value ?? 'VALUE'}`;
}

/** The synopses of a command, each without the leading `usage:`. */
export function synopses(spec: CommandSpec): string[] {
  const head = `tracepipe ${spec.name}`;
  if (spec.forms) return spec.forms.map((f) => `${head} ${f}`);
  const entries = Object.entries(spec.options);
  const required = entries.filter(([, o]) => o.required).map(([n, o]) => requiredText(n, o));
  const optional = entries.some(([, o]) => !o.required) ? ['[options]'] : [];
  const rest = spec.rest ? [`-- ${spec.rest.name}`] : [];
  return [[head, ...spec.positionals.map(positionalText), ...required, ...optional, ...rest].join(' ')];
}

/** The usage line(s) printed under a usage error. */
export function usageText(entry: CliEntry): string {
  const lines = isGroup(entry) ? [`tracepipe ${entry.name} ${entry.subcommands.map((s) => s.name.split(' ').pop()).join('|')} ...`] : synopses(entry);
  return lines.map((l, i) => `${i === 0 ? 'usage: ' : '       '}${l}`).join('\n');
}

/** What the help says about an option's default. */
export function defaultText(o: OptionSpec): string {
  if (o.type === 'boolean') return 'default: off';
  if (o.required) return 'required';
  if (o.defaultText !== undefined) return `default: ${o.defaultText}`;
  return `default: ${o.default ?? 'none'}`;
}

const quote = (a: string): string => (/^[\w./:=,@%+-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);

/** The command line of an example, as a shell would take it. */
export function exampleLine(spec: CommandSpec, args: readonly string[]): string {
  return ['tracepipe', spec.name, ...args.map(quote)].join(' ');
}

/** Two columns: names padded to a common width, descriptions after. */
function columns(rows: readonly (readonly [string, string])[]): string[] {
  const w = Math.max(...rows.map(([a]) => a.length)) + 2;
  return rows.map(([a, b]) => `  ${a.padEnd(w)}${b}`);
}

/** The full help of a command: usage, description, arguments, each option with its default, examples. */
export function commandHelp(spec: CommandSpec): string {
  const out = [usageText(spec), '', spec.description ?? spec.summary];
  const args: [string, string][] = spec.positionals.map((p) => [positionalText(p), p.description]);
  if (spec.rest) args.push([`-- ${spec.rest.name}`, spec.rest.description]);
  if (args.length > 0) out.push('', 'arguments:', ...columns(args));
  const options: [string, string][] = Object.entries(spec.options).map(([n, o]) => [optionText(n, o), `${o.description} [${defaultText(o)}]`]);
  options.push(['-h, --help', 'this help']);
  out.push('', 'options:', ...columns(options));
  if (spec.examples.length > 0) {
    out.push('', 'examples:');
    for (const e of spec.examples) out.push(`  ${exampleLine(spec, e.args)}`, `      ${e.does}`);
  }
  return `${out.join('\n')}\n`;
}

/** A group's help: its subcommands, one line each. */
export function groupHelp(group: CommandGroup): string {
  const rows = group.subcommands.map((s) => [synopses(s)[0]!.replace(/ \[options\]$/, ''), s.summary] as const);
  const out = [usageText(group), '', group.description ?? group.summary, '', 'commands:'];
  for (const [synopsis, summary] of rows) out.push(`  ${synopsis}`, `      ${summary}`);
  out.push('', 'examples:');
  for (const s of group.subcommands) for (const e of s.examples.slice(0, 1)) out.push(`  ${exampleLine(s, e.args)}`, `      ${e.does}`);
  out.push('', `'tracepipe ${group.name} COMMAND --help' (or 'tracepipe help ${group.name} COMMAND') shows a command's options and examples.`);
  return `${out.join('\n')}\n`;
}

/** The list of all commands, for `tracepipe --help`. */
export function mainHelp(entries: readonly CliEntry[]): string {
  const rows = entries.map((e) => [e.name, e.summary] as const);
  return [
    'usage: tracepipe <command> [options]',
    '',
    'commands:',
    ...columns(rows),
    '',
    "'tracepipe <command> --help' (or 'tracepipe help <command>') shows a command's usage, options with their defaults, and examples.",
    "'tracepipe --version' prints the version.",
    '',
  ].join('\n');
}
