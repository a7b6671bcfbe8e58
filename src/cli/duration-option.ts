import { CliError } from './cli-error.js';

/** A duration option (`500ms`, `10s`, `5m`, `1h`; a bare number is seconds) in milliseconds. */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m?.[2] ?? 's']!;
  const ms = m ? Number(m[1]) * unit : NaN;
  if (!(ms > 0)) throw new CliError(`${option} must look like 500ms, 10s, 5m or 1h, not '${text}'`);
  return ms;
}
