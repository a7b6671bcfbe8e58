import { parseArgs } from 'node:util';
import { explainTrace } from '../analysis/explain/explain-trace.js';
import { CliError } from './cli-error.js';
import { formatExplain } from './explain-text.js';
import { stringify } from './json-value.js';
import { writeOut } from './output.js';
import { printable } from './printable.js';

export const explainUsage = 'tracepipe explain FILE [--top N] [--span Name] [--min-ms N] [--json] [--no-source-maps]   why the slowest spans and every event-loop stall took their time: GC, stalls, children, CPU, queueing';

function count(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new CliError(`${flag} must be a whole number of at least 1, not '${text}'`);
  return n;
}

function milliseconds(text: string | undefined, flag: string): number {
  if (text === undefined) return 0;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliError(`${flag} must be a non-negative number of milliseconds, not '${text}'`);
  return n;
}

export async function explainCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { top: { type: 'string' }, span: { type: 'string' }, 'min-ms': { type: 'string' }, json: { type: 'boolean', default: false }, 'no-source-maps': { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1) throw new CliError(`usage: ${explainUsage}`);
  const span = values.span;
  if (span !== undefined && (span === '' || span.endsWith('/'))) throw new CliError(`--span needs a span type ("Provider/Span", or "Span"), not '${span}'`);
  const options = { top: count(values.top, '--top', 10), minMs: milliseconds(values['min-ms'], '--min-ms'), sourceMaps: !values['no-source-maps'], ...(span !== undefined ? { span } : {}) };
  const report = await explainTrace(positionals[0]!, options);
  if (span !== undefined && report.spans.matching + report.spans.unfinished + report.spans.endsWithoutBegin === 0) {
    const types = Object.keys(report.spanTypes);
    throw new CliError(`no span of type '${printable(span)}' in ${positionals[0]}; ${types.length > 0 ? `its span types: ${types.slice(0, 20).map(printable).join(', ')}` : 'it has no spans'}`);
  }
  await writeOut(values.json ? `${stringify(report, 2)}\n` : formatExplain(report));
  return report.complete ? 0 : 1;
}
