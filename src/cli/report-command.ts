import { resolve } from 'node:path';
import { writePrivateFile } from '../sinks/private-file.js';
import { loadAnalyze } from './analyze-loader.js';
import { CliError } from './cli-error.js';
import { defineCommand, JSON_OPTION, QUIET_OPTION } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { formatBytes } from './format-size.js';
import { formatNs } from './format-time.js';
import { stringify } from './json-value.js';
import { writeErr, writeOut } from './output.js';
import type { CounterStat } from '../analysis/counter-summary.js';
import { printable } from './printable.js';
import { requestSamplingLine } from './request-sampling-text.js';
import { ProgressLine } from './progress-line.js';
import type { SpanReport, SpanStats } from './span-tracker.js';
import { cpuSectionLines, onCpuLine } from './report/cpu-section.js';
import { ReportCharts } from './report/report-charts.js';
import { explainSection } from './report/explain-section.js';
import { buildReport, readReport, type Distribution, type ReportOptions, type TraceReport } from './trace-report.js';
import { otlpExportText } from './otlp-export-text.js';

const ms = (v: number) => `${v.toFixed(2)} ms`;

function distributionRow(label: string, d: Distribution, w: number): string {
  return `  ${label.padEnd(w)} ${String(d.count).padStart(7)} ${ms(d.totalMs).padStart(12)} ${`${d.percentOfWall.toFixed(2)}%`.padStart(8)} ${[d.p50Ms, d.p90Ms, d.p99Ms, d.maxMs].map((v) => ms(v).padStart(11)).join(' ')}`;
}

export function formatReport(r: TraceReport): string {
  const lines: string[] = [];
  lines.push(`trace       ${countOf(r.events, 'event')} over ${formatNs(r.wallNs)}`);
  if (!r.complete) lines.push(`WARNING     ${printable(r.error ?? 'incomplete trace')}; the report covers the intact part`);
  const g = r.gc;
  lines.push('', `GC pauses (Runtime.GC): ${g.all.count}`);
  if (g.all.count > 0) {
    const kinds = Object.entries(g.byKind).sort((a, b) => b[1].totalMs - a[1].totalMs).map(([k, d]) => [printable(k), d] as const);
    const w = Math.max(8, ...kinds.map(([k]) => k.length));
    lines.push(`  ${'kind'.padEnd(w)} ${'count'.padStart(7)} ${'total'.padStart(12)} ${'% wall'.padStart(8)} ${['p50', 'p90', 'p99', 'max'].map((h) => h.padStart(11)).join(' ')}`);
    for (const [k, d] of kinds) lines.push(distributionRow(k, d, w));
    lines.push(distributionRow('all', g.all, w));
    const threads = Object.entries(g.byThread);
    if (threads.length > 1) for (const [t, d] of threads) lines.push(distributionRow(`thread ${t}`, d, w));
    lines.push('', `  at or above ${g.thresholds.infoMs} ms (info): ${g.aboveInfo}    at or above ${g.thresholds.warnMs} ms (warn): ${g.aboveWarn}`);
    lines.push('', `  longest ${g.longest.length}:`);
    for (const p of g.longest) lines.push(`    ${(p.timeNs / 1e9).toFixed(6).padStart(12)} s  thread ${String(p.threadId).padEnd(4)} ${printable(p.kind).padEnd(w)} ${ms(p.durationMs).padStart(11)}`);
  }
  const s = r.stalls;
  lines.push('', `event-loop stalls (Runtime.EventLoop): ${s.count}${s.count ? `, ${ms(s.totalMs)} in total` : ''}${s.unfinished ? `, ${s.unfinished} still going when the trace ended` : ''}`);
  for (const x of s.longest) {
    lines.push(`    ended ${(x.timeNs / 1e9).toFixed(6).padStart(12)} s  thread ${String(x.thread).padEnd(4)} ${ms(x.durationMs).padStart(11)}`);
    if (x.onCpu) lines.push(`      ${onCpuLine(x.onCpu, x.thread)}`);
  }
  for (const x of s.stillGoing) lines.push(`    still going since ${(x.sinceNs / 1e9).toFixed(6).padStart(12)} s  thread ${x.thread}`);
  lines.push('', `event-loop delay (Runtime.EventLoop):${r.eventLoop.length ? '' : ' none recorded'}`);
  for (const d of r.eventLoop) {
    lines.push(`  thread ${String(d.threadId).padEnd(4)} ${countOf(d.intervals, 'interval')}: median p50 ${ms(d.p50Ms)}, worst p99 ${ms(d.worstP99Ms)}, max ${ms(d.maxMs)}, utilisation ${(100 * d.meanUtilization).toFixed(1)}%`);
  }
  const sampling = r.explain.requestSampling;
  lines.push('', ...spanLines(r.spans));
  if (sampling) lines.push(`  ${requestSamplingLine(sampling, r.wallNs)}`);
  lines.push('', ...counterLines(r.counters));
  lines.push('', ...cpuSectionLines(r.cpu));
  lines.push('', ...explainSection(r.explain));
  const dr = r.drops;
  lines.push('', `dropped events: ${dr.dropped.toLocaleString('en-US')}${dr.dropped ? ` in ${countOf(dr.ranges, 'range')} (${Object.entries(dr.byThread).map(([t, n]) => `thread ${t}: ${n}`).join(', ')})` : ''}`);
  if (r.otlp) lines.push(`OTLP export: ${otlpExportText(r.otlp)}`);
  return `${lines.join('\n')}\n`;
}

/** Each counter: samples, min, mean, max, last (and the total of an interval counter). */
function counterLines(counters: readonly CounterStat[]): string[] {
  const lines = [`counters: ${counters.length}${counters.length ? '' : ' (none recorded)'}`];
  if (counters.length === 0) return lines;
  const names = counters.map((c) => printable(`${c.provider}/${c.name}`));
  const units = counters.map((c) => printable(c.unit));
  const nw = Math.max(...names.map((n) => n.length));
  const uw = Math.max(4, ...units.map((u) => u.length));
  const v = (x: number): string => (Number.isInteger(x) ? x.toLocaleString('en-US') : x.toFixed(2)).padStart(14);
  lines.push(`  ${'counter'.padEnd(nw)}  ${'unit'.padEnd(uw)} ${'samples'.padStart(8)} ${['min', 'mean', 'max', 'last'].map((h) => h.padStart(14)).join(' ')}  total`);
  counters.forEach((c, i) => {
    lines.push(`  ${names[i]!.padEnd(nw)}  ${units[i]!.padEnd(uw)} ${String(c.samples).padStart(8)} ${[c.min, c.mean, c.max, c.last].map(v).join(' ')}${c.kind === 'interval' ? `  ${v(c.total).trim()}` : ''}`);
  });
  return lines;
}

/**
 * The top span names (by count, total and self time: the union of the three, most total time first) and the unfinished spans;
 * where requests were sampled, the counts estimated for all requests beside the kept ones' ("est.").
 */
function spanLines(s: SpanReport): string[] {
  const sampled = s.estimatedFinished !== undefined;
  const counts = `${s.finished.toLocaleString('en-US')} finished${sampled ? ` (est. ${s.estimatedFinished!.toLocaleString('en-US')} for all requests)` : ''}${s.errors ? ` (${s.errors} with errors)` : ''}, ${s.unfinished} unfinished${s.endsWithoutBegin ? `, ${s.endsWithoutBegin} ends without a begin` : ''}`;
  if (s.finished + s.unfinished + s.endsWithoutBegin === 0) return ['spans: none recorded'];
  const lines = [`spans: ${counts}`];
  const shown = new Set([...s.topByTotal, ...s.topBySelf, ...s.topByCount]);
  const rows = s.byName.filter((x) => shown.has(x.span)).map((x) => ({ ...x, span: printable(x.span) }));
  if (rows.length > 0) {
    const w = Math.max(8, ...rows.map((x) => x.span.length));
    const est = sampled ? ` ${'est. count'.padStart(11)}` : '';
    lines.push(`  ${'span'.padEnd(w)} ${'count'.padStart(9)}${est} ${['total', 'self', 'p50', 'p99', 'max'].map((h) => h.padStart(12)).join(' ')} ${'errors'.padStart(7)}`);
    const estCell = (x: SpanStats) => (x.estimatedCount === undefined ? '' : ` ${x.estimatedCount.toLocaleString('en-US').padStart(11)}`);
    for (const x of rows) lines.push(`  ${x.span.padEnd(w)} ${String(x.count).padStart(9)}${estCell(x)} ${[x.totalMs, x.selfMs, x.p50Ms, x.p99Ms, x.maxMs].map((v) => ms(v).padStart(12)).join(' ')} ${String(x.errors).padStart(7)}`);
  }
  if (s.slowest.length > 0) {
    lines.push(`  slowest ${s.slowest.length}:`);
    for (const x of s.slowest) {
      lines.push(`    began ${(x.startNs / 1e9).toFixed(6).padStart(12)} s  thread ${String(x.threadId).padEnd(4)} ${ms(x.durationMs).padStart(11)}  ${printable(x.span)}${x.error ? '  (error)' : ''}`);
      if (x.onCpu) lines.push(`      ${onCpuLine(x.onCpu, x.threadId)}`);
    }
  }
  if (s.setAside > 0) lines.push(`  ${s.setAside.toLocaleString('en-US')} of the unfinished were set aside while more than 65,536 spans were open at once (or their id was begun again); an end that came for one counts as an end without a begin`);
  if (s.unfinished > 0) {
    lines.push(`  unfinished when the trace ended (oldest ${s.oldestUnfinished.length}):`);
    for (const u of s.oldestUnfinished) lines.push(`    began ${(u.startNs / 1e9).toFixed(6).padStart(12)} s  thread ${String(u.threadId).padEnd(4)} ${printable(u.span)}  open ${ms(u.openMs)}`);
  }
  return lines;
}

function milliseconds(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliError(`${flag} must be a non-negative number of milliseconds, not '${text}'`);
  return n;
}

export const reportCommand = defineCommand({
  name: 'report',
  summary: 'GC pauses, event-loop stalls and delay, spans, CPU samples, drops; --html: a page of charts and a flame graph',
  description:
    'What happened over a trace: GC pauses by kind and thread, event-loop stalls and delay, spans (slowest, unfinished), the top\n' +
    'functions by CPU samples, why the slowest spans took their time (as `tracepipe explain`), and every drop. With --html, one\n' +
    'self-contained page of charts and a flame graph (needs @tracepipe/analyze).',
  positionals: [{ name: 'FILE', description: 'the trace (.tptrace)' }],
  options: {
    'info-ms': { type: 'string', value: 'MS', default: '10', description: 'GC pauses at least this long count as info' },
    'warn-ms': { type: 'string', value: 'MS', default: '50', description: 'GC pauses at least this long count as warn (not below --info-ms)' },
    ...JSON_OPTION,
    html: { type: 'string', value: 'OUT.html', defaultText: 'none: the report is printed as text', description: 'write a page of charts and a flame graph to OUT.html instead' },
    'no-source-maps': { type: 'boolean', description: 'show CPU frames where the running script has them, not where its source maps point' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.tptrace'], does: 'the report as text' },
    { args: ['app.tptrace', '--html', 'app.html'], does: 'one page of charts and a flame graph; open it in a browser' },
    { args: ['app.tptrace', '--warn-ms', '20', '--json'], does: 'as JSON, pauses of 20 ms and more counted as warn' },
  ],
  async run({ values, positionals }) {
    const infoMs = milliseconds(values['info-ms'], '--info-ms');
    const warnMs = milliseconds(values['warn-ms'], '--warn-ms');
    if (warnMs < infoMs) throw new CliError(`--warn-ms (${warnMs}) must not be below --info-ms (${infoMs})`);
    const file = positionals[0]!;
    const options: ReportOptions = { infoMs, warnMs, sourceMaps: !values['no-source-maps'] };
    // Every pass over the trace (the report's, the summary's, explain's) shows on the line.
    const progress = new ProgressLine('reading', { quiet: values.quiet }).followTraceReads();
    try {
      if (values.html !== undefined) return await htmlReport(file, values.html, options, progress);
      const report = await buildReport(file, options);
      progress.stop();
      await writeOut(values.json ? `${stringify(report, 2)}\n` : formatReport(report));
      return report.complete ? 0 : 1;
    } finally {
      progress.stop();
    }
  },
});

/** `--html OUT.html`: the charts' data collected in the report's own pass, the page made by @tracepipe/analyze (it inlines the chart library). */
async function htmlReport(file: string, out: string, options: ReportOptions, progress: ProgressLine): Promise<number> {
  if (out === '' || resolve(out) === resolve(file)) throw new CliError(`--html needs an output file other than the trace, not '${out}'`);
  const analyze = await loadAnalyze('tracepipe report --html');
  const started = performance.now();
  const charts = new ReportCharts();
  const { report, profile } = await readReport(file, options, (batch) => charts.add(batch));
  progress.update({ doing: 'drawing the page' });
  const page = await analyze.renderReportPage(charts.data(file, report, formatReport(report), options, profile));
  try {
    await writePrivateFile(out, page);
  } catch (e) {
    throw new CliError(`cannot write ${out}: ${(e as Error).message}`);
  }
  progress.stop();
  const s = (performance.now() - started) / 1000;
  await writeOut(`wrote ${out} (${formatBytes(Buffer.byteLength(page))}) from ${countOf(report.events, 'event')} in ${s.toFixed(2)} s: ${countOf(report.gc.all.count, 'GC pause')}, ${countOf(report.stalls.count, 'stall')}, ${countOf(report.cpu?.samples ?? 0, 'CPU sample')}, ${countOf(report.drops.ranges, 'drop range')}\n`);
  if (!report.complete) writeErr(`tracepipe: ${report.error ?? 'incomplete trace'}; the page covers the intact part\n`);
  return report.complete ? 0 : 1;
}
