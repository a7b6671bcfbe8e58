import { requestSamplingLine } from './request-sampling-text.js';
import type { Cause, ExplainedItem, ExplainReport, FunctionShare, Share } from '../analysis/explain/explanation.js';
import { spanTitle } from '../analysis/explain/verdict.js';
import { countOf } from './format-count.js';
import { formatNs } from './format-time.js';
import { printable } from './printable.js';

const CAUSE_NAMES: Record<Cause, string> = { gc: 'GC', stall: 'stall', cpu: 'CPU', children: 'children', queued: 'queued', unexplained: 'unexplained' };
const ms = (v: number): string => `${v.toFixed(2)} ms`;

/**
 * Percentages of shares rounded to one decimal so that they still add up to 100.0 (largest remainder):
 * the shares add up exactly, and the printed figures should too.
 */
function roundedPercents(shares: readonly Share[]): number[] {
  const total = shares.reduce((n, s) => n + s.ns, 0);
  if (total <= 0) return shares.map(() => 0);
  const tenths = shares.map((s) => (1000 * s.ns) / total);
  const floors = tenths.map(Math.floor);
  let left = 1000 - floors.reduce((n, f) => n + f, 0);
  const order = tenths.map((_, i) => i).sort((a, b) => tenths[b]! - floors[b]! - (tenths[a]! - floors[a]!));
  for (const i of order) {
    if (left-- <= 0) break;
    floors[i]!++;
  }
  return floors.map((f) => f / 10);
}

function functionList(list: readonly FunctionShare[]): string {
  return list.map((f) => `${printable(f.function)} ${ms(f.selfMs)}`).join(', ');
}

/** What each share stands for, in a few words, per cause. */
function detail(item: ExplainedItem, cause: Cause): string {
  switch (cause) {
    case 'gc': {
      const g = item.gc;
      if (g.pauses === 0) return 'no pause';
      return `${g.pauses} ${g.pauses === 1 ? 'pause' : 'pauses'} (${Object.entries(g.byKind).map(([k, n]) => `${n} ${printable(k)}`).join(', ')}), longest ${ms(g.longestMs)} ${printable(g.longestKind)}`;
    }
    case 'stall': {
      const s = item.stalls!;
      if (s.stalls === 0) return 'no stall';
      return `${s.stalls} ${s.stalls === 1 ? 'stall' : 'stalls'}${s.functions.length > 0 ? `; on CPU: ${functionList(s.functions.slice(0, 3))}` : ''}`;
    }
    case 'cpu': {
      const c = item.cpu;
      if (!c.sampled) return printable(c.note ?? '');
      return `${countOf(c.samples, 'sample')}, ${ms(c.onCpuMs)} on CPU and ${ms(c.offCpuMs)} off (before the causes above)${c.functions.length > 0 ? `; top self: ${functionList(c.functions.slice(0, 3))}` : ''}`;
    }
    case 'children': {
      const c = item.children!;
      if (c.count === 0) return 'no child span';
      return `${c.count} ${c.count === 1 ? 'child' : 'children'}, self ${ms(c.selfMs)}; most time: ${c.top.map((x) => `${printable(spanTitle(x))} ${ms(x.durationMs)}${x.unfinished ? ' (unfinished)' : ''}`).join(', ')}`;
    }
    case 'queued': {
      const q = item.concurrency!;
      const type = printable(item.span.slice(item.span.lastIndexOf('/') + 1));
      return `${q.running} other ${type} ${q.running === 1 ? 'span' : 'spans'} ran during it, ${q.before} began before it`;
    }
    case 'unexplained':
      return printable(item.shares[item.shares.length - 1]!.from.replace(/^the rest: /, ''));
  }
}

function titleLine(item: ExplainedItem, n: number): string {
  const title = item.kind === 'span' ? `${printable(item.span)} ${printable(item.label)}` : `stall of thread ${item.threadId}'s event loop`;
  return `${String(n).padStart(3)}. ${title}  ${ms(item.durationMs)}${item.unfinished ? ' (still going when the trace ended)' : ''}  thread ${item.threadId}  at ${(item.startNs / 1e9).toFixed(6)} s`;
}

/** One item: its title line, verdict, and a row per share (they add up to its duration). */
export function formatItem(item: ExplainedItem, n: number): string[] {
  const lines = [titleLine(item, n), `     verdict: ${printable(item.verdict.text)}`];
  const percents = roundedPercents(item.shares);
  item.shares.forEach((s, i) => {
    lines.push(`     ${CAUSE_NAMES[s.cause].padEnd(12)} ${ms(s.ns / 1e6).padStart(12)} ${`${percents[i]!.toFixed(1)} %`.padStart(8)}   ${detail(item, s.cause)}`);
  });
  return lines;
}

export function formatExplain(r: ExplainReport): string {
  const lines: string[] = [];
  lines.push(`trace        ${countOf(r.events, 'event')} over ${formatNs(r.wallNs)}`);
  if (!r.complete) lines.push(`WARNING      ${printable(r.error ?? 'incomplete trace')}; explained from the intact part`);
  if (r.dropped > 0) lines.push(`WARNING      ${countOf(r.dropped, 'event was', 'events were')} dropped: a span whose begin or end was lost is not explained, and a lost pause or sample is not counted`);
  if (r.requestSampling) lines.push(requestSamplingLine(r.requestSampling, r.wallNs));
  lines.push(...samplerAndPrecedence(r));
  const s = r.spans;
  const type = r.options.span === null ? 'spans' : `${printable(r.options.span)} spans`;
  const min = r.options.minMs > 0 ? ` of at least ${r.options.minMs} ms` : '';
  const estimated = r.requestSampling?.estimated;
  lines.push('', `slowest ${type}${min}: ${s.slowest.length} of ${s.matching.toLocaleString('en-US')} finished${estimated ? ` (est. ${estimated.matching.toLocaleString('en-US')} for all requests)` : ''}${s.unfinished > 0 ? ` (${s.unfinished} unfinished, not explained)` : ''}`);
  s.slowest.forEach((item, i) => lines.push(...formatItem(item, i + 1), ''));
  if (s.slowest.length === 0) lines.push('');
  lines.push(`event-loop stalls${min}: ${r.stalls.items.length} of ${r.stalls.count}`);
  r.stalls.items.forEach((item, i) => lines.push(...formatItem(item, i + 1), ''));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** One item in three lines: title, verdict, and its shares on one line (for the report). */
export function formatItemBrief(item: ExplainedItem, n: number): string[] {
  const percents = roundedPercents(item.shares);
  return [titleLine(item, n), `     ${printable(item.verdict.text)}`, `     ${item.shares.map((s, i) => `${CAUSE_NAMES[s.cause]} ${percents[i]!.toFixed(1)} %`).join(' · ')}`];
}

/** "CPU samples" and "precedence" lines, as explain and the report's section print them. */
export function samplerAndPrecedence(r: ExplainReport): string[] {
  return [
    `CPU samples  ${r.sampler.present ? `threads ${r.sampler.sampledThreads.join(', ')}` : `none: ${r.sampler.note}`}`,
    ...r.sampler.sourceMaps.map((n) => `             ${n}`),
    `precedence   each instant of an item counts once, for the first of: ${r.precedence.map((c) => CAUSE_NAMES[c]).join(' > ')}`,
  ];
}
