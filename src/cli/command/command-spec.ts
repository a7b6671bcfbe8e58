/**
 * One declaration per command: what it is called, its arguments, its options (type, default,
 * description) and examples. The parser (command-parse.ts) and the help (command-help.ts) are both
 * made from it, so they cannot drift apart, and test/cli-help.test.mjs walks every declaration.
 *
 * To add a command: write `export const fooCommand = defineCommand({ name: 'foo', summary, positionals,
 * options, examples, run })` in its own file, where `run` gets the parsed values (typed from the
 * options) and returns the exit code; then list it in cli/command-list.ts (a subcommand goes in its
 * group's `subcommands`). Every string option needs a `default`, a `defaultText` or `required: true`,
 * so that the help can say what happens without it.
 */

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** One letter: `-o`. */
  readonly short?: string;
  /** What a string option's value stands for in the usage and the help: FILE, N, MS. */
  readonly value?: string;
  readonly description: string;
  /** Given to the parser and shown in the help. A boolean option is off unless given. */
  readonly default?: string;
  /** How the help states a default that is worked out at run time, or what leaving the option out means. */
  readonly defaultText?: string;
  /** The command cannot run without it: its absence is a usage error. */
  readonly required?: boolean;
}

export interface PositionalSpec {
  /** As the usage shows it: FILE, A, B. */
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
  /** One or more (zero or more when also optional). */
  readonly variadic?: boolean;
}

export interface Example {
  /** The arguments after `tracepipe <command>`. */
  readonly args: readonly string[];
  readonly does: string;
}

type OptionValue<S extends OptionSpec> = S['type'] extends 'boolean'
  ? boolean
  : S extends { readonly default: string } | { readonly required: true }
    ? string
    : string | undefined;

export type OptionValues<O extends Record<string, OptionSpec>> = { -readonly [K in keyof O]: OptionValue<O[K]> };

export interface ParsedCommand<O extends Record<string, OptionSpec>> {
  readonly values: OptionValues<O>;
  readonly positionals: readonly string[];
  /** What follows `--`, for a command that declares `rest`. */
  readonly rest: readonly string[];
}

export interface CommandSpec<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** As typed after `tracepipe`: 'convert', or 'gcdump report' for a subcommand. */
  readonly name: string;
  /** One line, for the list of commands. */
  readonly summary: string;
  /** A paragraph for the help, when the summary does not say enough. */
  readonly description?: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: O;
  /** Arguments after `--` (collect's command to launch). */
  readonly rest?: { readonly name: string; readonly description: string };
  /** Synopses after the command's name, when the one made from the declaration cannot say it (several forms). */
  readonly forms?: readonly string[];
  readonly examples: readonly Example[];
  /** Runs the command on its parsed arguments; resolves to the exit code. (A method, so that any command fits a list of commands.) */
  run(args: ParsedCommand<O>): Promise<number>;
}

/** A command whose first argument names a subcommand: `tracepipe gcdump report ...`. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly description?: string;
  readonly subcommands: readonly CommandSpec[];
}

export type CliEntry = CommandSpec | CommandGroup;

export const isGroup = (e: CliEntry): e is CommandGroup => 'subcommands' in e;

/** Declares a command; the `const` type parameter keeps each option's literal type, so `run` sees typed values. */
export function defineCommand<const O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): CommandSpec<O> {
  return spec;
}

/** `--quiet`, for every command that shows progress. */
export const QUIET_OPTION = {
  quiet: { type: 'boolean', short: 'q', description: 'no progress line on stderr (without it, one is shown while stderr is a terminal)' },
} as const satisfies Record<string, OptionSpec>;

/** `--json`, for commands that can print their result as JSON. */
export const JSON_OPTION = {
  json: { type: 'boolean', description: 'print the result as JSON instead of text' },
} as const satisfies Record<string, OptionSpec>;
