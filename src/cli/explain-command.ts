import { explainTrace } from '../analysis/explain/explain-trace.js';
import type { ExplainReport } from '../analysis/explain/explanation.js';
import { CliError } from './cli-error.js';
import { defineCommand, JSON_OPTION, QUIET_OPTION } from './command/command-spec.js';
import { formatExplain } from './explain-text.js';
import { stringify } from './json-value.js';
import { writeOut } from './output.js';
import { printable } from './printable.js';
import { ProgressLine } from './progress-line.js';

function count(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new CliError(`${flag} must be a whole number of at least 1, not '${text}'`);
  return n;
}

function milliseconds(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliError(`${flag} must be a non-negative number of milliseconds, not '${text}'`);
  return n;
}

export const explainCommand = defineCommand({
  name: 'explain',
  summary: 'why the slowest spans and every event-loop stall took their time: GC, stalls, children, CPU, queueing',
  description:
    'Why the slowest spans and every event-loop stall took their time: each one\'s time split between GC pauses, stalls, child\n' +
    'spans, CPU (from CPU samples) and queueing behind earlier spans, with a one-line verdict (docs/EXPLAIN.md).',
  positionals: [{ name: 'FILE', description: 'the trace (.tptrace)' }],
  options: {
    top: { type: 'string', value: 'N', default: '10', description: 'how many of the slowest spans to explain' },
    span: { type: 'string', value: 'NAME', defaultText: 'every span type', description: 'only spans of this type ("Provider/Span", or "Span")' },
    'min-ms': { type: 'string', value: 'MS', default: '0', description: 'leave out stalls shorter than this' },
    ...JSON_OPTION,
    'no-source-maps': { type: 'boolean', description: 'show CPU frames where the running script has them, not where its source maps point' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.tptrace'], does: 'the 10 slowest spans and every stall, explained' },
    { args: ['app.tptrace', '--span', 'Http/Request', '--top', '3'], does: 'the 3 slowest Http/Request spans' },
  ],
  async run({ values, positionals }) {
    const span = values.span;
    if (span !== undefined && (span === '' || span.endsWith('/'))) throw new CliError(`--span needs a span type ("Provider/Span", or "Span"), not '${span}'`);
    const options = { top: count(values.top, '--top'), minMs: milliseconds(values['min-ms'], '--min-ms'), sourceMaps: !values['no-source-maps'], ...(span !== undefined ? { span } : {}) };
    const progress = new ProgressLine('explaining', { quiet: values.quiet }).followTraceReads();
    let report: ExplainReport;
    try {
      report = await explainTrace(positionals[0]!, options);
    } finally {
      progress.stop();
    }
    if (span !== undefined && report.spans.matching + report.spans.unfinished + report.spans.endsWithoutBegin === 0) {
      const types = Object.keys(report.spanTypes);
      throw new CliError(`no span of type '${printable(span)}' in ${positionals[0]}; ${types.length > 0 ? `its span types: ${types.slice(0, 20).map(printable).join(', ')}` : 'it has no spans'}`);
    }
    await writeOut(values.json ? `${stringify(report, 2)}\n` : formatExplain(report));
    return report.complete ? 0 : 1;
  },
});
