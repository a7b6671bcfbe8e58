import { CliError } from './cli-error.js';

/** A required `--name` that must be a positive integer; `usage` is shown when it is missing. */
export function positiveInt(name: string, v: string | undefined, usage: string): number {
  if (v === undefined) throw new CliError(`usage: ${usage}`);
  if (!/^\d+$/.test(v) || Number(v) <= 0) throw new CliError(`--${name} must be a positive integer, not '${v}'`);
  return Number(v);
}
