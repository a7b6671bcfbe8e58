import { DROP_REASONS, type DropReasonCounts } from '../format/drop-reason.js';
import { TraceFormatError } from '../format/format-error.js';
import { readTrace, type TraceSummary } from '../format/trace-reader.js';
import { defineCommand, JSON_OPTION, QUIET_OPTION } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { formatNs } from './format-time.js';
import { stringify } from './json-value.js';
import { writeOut } from './output.js';
import { printable } from './printable.js';
import { ProgressLine } from './progress-line.js';
import { otlpExportText } from './otlp-export-text.js';

/** "why: 120 full, 3 invalid-argument, 4 not counted by their producer" */
function describeDropReasons(reasons: DropReasonCounts, total: number): string {
  const parts = DROP_REASONS.filter((r) => reasons[r] > 0).map((r) => `${reasons[r].toLocaleString('en-US')} ${r}`);
  const counted = DROP_REASONS.reduce((n, r) => n + reasons[r], 0);
  if (total > counted) parts.push(`${(total - counted).toLocaleString('en-US')} not counted by their producer (a damaged chunk or a stream without reasons)`);
  return `why: ${parts.join(', ')}`;
}

export function formatStats(s: TraceSummary): string {
  const lines: string[] = [];
  const h = s.header;
  if (h) lines.push(`trace     pid ${h.pid} (${printable(h.argv.slice(1).join(' ') || h.processTitle)}), node ${printable(h.nodeVersion)}, tracepipe ${printable(h.tracepipeVersion)}, ${printable(h.hostname)}`);
  if (h) lines.push(`session   ${printable(h.session.providers)} (${printable(h.session.bufferingMode)}, ${h.session.bufferSizeMB} MB)`);
  lines.push(`events    ${s.events.toLocaleString('en-US')} in ${formatNs(s.durationNs)}, ${s.bytes.toLocaleString('en-US')} bytes (${s.bytesPerEvent.toFixed(1)} bytes/event)`);
  lines.push(`dropped   ${s.dropped.toLocaleString('en-US')}${s.events + s.dropped > 0 ? ` (${((100 * s.dropped) / (s.events + s.dropped)).toFixed(2)}% of attempts)` : ''}`);
  if (s.dropped > 0) lines.push(`          ${describeDropReasons(s.dropReasons, s.dropped)}`);
  if (s.otlp) lines.push(`otlp      ${otlpExportText(s.otlp)} (the file holds every event)`);
  if (!s.complete) lines.push(`WARNING   ${printable(s.error?.message ?? 'incomplete trace')}; counts cover the intact part`);
  lines.push('', 'by event:');
  const byEvent = Object.entries(s.byEvent).sort((a, b) => b[1] - a[1]).map(([k, n]) => [printable(k), n] as const);
  const w = Math.max(5, ...byEvent.map(([k]) => k.length));
  for (const [k, n] of byEvent) lines.push(`  ${k.padEnd(w)}  ${n.toLocaleString('en-US').padStart(12)}`);
  lines.push('', 'by thread:');
  for (const [t, v] of Object.entries(s.threads)) {
    lines.push(`  thread ${t.padEnd(6)} ${v.events.toLocaleString('en-US').padStart(12)} events ${v.dropped.toLocaleString('en-US').padStart(10)} dropped`);
  }
  if (s.drops.length > 0) {
    lines.push('', 'drops (thread: sequence range):');
    for (const d of s.drops.slice(0, 20)) lines.push(`  thread ${d.threadId}: #${d.fromSeq}..#${d.toSeq} (${d.count.toLocaleString('en-US')})`);
    const more = s.drops.length - 20 + s.dropRangesOmitted;
    if (more > 0) lines.push(`  … ${countOf(more, 'more range', 'more ranges')}`);
  }
  return `${lines.join('\n')}\n`;
}

export const statsCommand = defineCommand({
  name: 'stats',
  summary: 'counts per event and thread, drops, duration, bytes per event',
  positionals: [{ name: 'FILE', description: 'the trace (.tptrace)' }],
  options: { ...JSON_OPTION, ...QUIET_OPTION },
  examples: [
    { args: ['app.tptrace'], does: 'what the trace holds and what it lost' },
    { args: ['app.tptrace', '--json'], does: 'the same as JSON, for scripts' },
  ],
  async run({ values, positionals }) {
    const progress = new ProgressLine('counting', { quiet: values.quiet }).followTraceReads();
    let s: TraceSummary;
    try {
      s = await readTrace(positionals[0]!).summary();
    } finally {
      progress.stop();
    }
    await writeOut(values.json ? `${stringify(s, 2)}\n` : formatStats(s));
    // The counts cover the intact part; the damage is reported like any other unreadable trace.
    if (s.error) throw new TraceFormatError(s.error.code, s.error.message, s.error.offset);
    return 0;
  },
});
