import { CliError } from './cli-error.js';

/** The value of `--name` as a positive integer (a process or session id). */
export function positiveInt(name: string, v: string): number {
  if (!/^\d+$/.test(v) || Number(v) <= 0) throw new CliError(`--${name} must be a positive integer, not '${v}'`);
  return Number(v);
}
