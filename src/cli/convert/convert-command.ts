import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { convertTrace } from '../../export/convert-trace.js';
import { CliError } from '../cli-error.js';
import { formatBytes } from '../format-size.js';
import { writeOut } from '../output.js';
import { ConvertProgressLine } from './convert-progress.js';
import { CONVERT_FORMATS } from './convert-formats.js';

const names = Object.keys(CONVERT_FORMATS).join('|');
export const convertUsage = `tracepipe convert FILE --to ${names} [-o OUT]   for Perfetto, chrome://tracing, babeltrace2, DuckDB (docs/CONVERT.md)`;

function defaultOutput(input: string, suffix: string): string {
  return `${input.endsWith('.tptrace') ? input.slice(0, -'.tptrace'.length) : input}${suffix}`;
}

const count = (n: number) => n.toLocaleString('en-US');

export async function convertCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { to: { type: 'string' }, output: { type: 'string', short: 'o' } },
  });
  if (positionals.length !== 1 || values.to === undefined) throw new CliError(`usage: ${convertUsage}`);
  const input = positionals[0]!;
  const format = CONVERT_FORMATS[values.to];
  if (!format) throw new CliError(`--to must be one of ${Object.keys(CONVERT_FORMATS).join(', ')}, not '${values.to}'`);
  const output = values.output ?? defaultOutput(input, format.suffix);
  if (output === '-' && format.output === 'directory') throw new CliError(`--to ${values.to} writes a directory of files; give -o DIR, not -o -`);
  if (resolve(output) === resolve(input)) throw new CliError(`the output ${output} would overwrite the input`);
  const writer = await format.create(output);
  const progress = new ConvertProgressLine(process.stderr);
  const started = performance.now();
  const result = await convertTrace(input, writer, (p) => progress.update(p)).finally(() => progress.stop());
  const s = (performance.now() - started) / 1000;
  const o = result.output;
  const drops = result.dropped > 0 ? `${count(result.dropped)} dropped in ${count(result.dropRanges)} ranges` : 'none dropped';
  const files = format.output === 'directory' ? `${count(o.files)} file${o.files === 1 ? '' : 's'}, ` : '';
  const summary =
    `converted ${count(result.events)} events (${drops}) from ${input} (${formatBytes(result.bytesIn)}) to ${o.path === '-' ? 'stdout' : o.path} ` +
    `(${values.to}, ${files}${formatBytes(o.bytes)}) in ${s.toFixed(2)} s: ${(result.events / s / 1e6).toFixed(2)} M events/s, ` +
    `${(result.bytesIn / s / 1e6).toFixed(1)} MB/s in, ${(o.bytes / s / 1e6).toFixed(1)} MB/s out\n`;
  const text = summary + (o.notes ?? []).map((note) => `note: ${note}\n`).join('');
  // The summary goes beside the output, never into it.
  if (output === '-') process.stderr.write(text);
  else await writeOut(text);
  // A damaged input: everything intact was converted; the error says where the input broke.
  if (result.error) throw result.error;
  return 0;
}
