import type { ExplainReport } from '../../analysis/explain/explanation.js';
import { formatItemBrief, samplerAndPrecedence } from '../explain-text.js';

/** Stalls the report explains at most (the longest); `tracepipe explain` explains every one. */
const REPORT_STALLS = 10;

/** The report's section of `tracepipe explain`: the slowest spans and the longest stalls, each in three lines. */
export function explainSection(x: ExplainReport): string[] {
  const lines = ['why it was slow (tracepipe explain FILE for every share in full):', ...samplerAndPrecedence(x).map((l) => `  ${l}`)];
  const spans = x.spans.slowest;
  lines.push('', `  slowest spans: ${spans.length} of ${x.spans.matching.toLocaleString('en-US')} finished`);
  spans.forEach((item, i) => lines.push(...formatItemBrief(item, i + 1)));
  const stalls = [...x.stalls.items].sort((a, b) => b.durationMs - a.durationMs).slice(0, REPORT_STALLS);
  lines.push('', `  longest event-loop stalls: ${stalls.length} of ${x.stalls.count}`);
  stalls.forEach((item, i) => lines.push(...formatItemBrief(item, i + 1)));
  return lines;
}
