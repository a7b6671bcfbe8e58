// The HTML report's "why it was slow" section (runs in the browser, as a module script after the
// page script): `tracepipe explain`'s verdicts for the slowest spans and the longest stalls, each a
// link to its interval on the timeline (the page script's `#t=FROM,TO` address) with a bar of its
// shares. What it drew is on `window.tracepipeExplain`, for tests.
import type { ReportPageData } from 'tracepipe/export';

type ExplainReport = ReportPageData['report']['explain'];
type ExplainedItem = ExplainReport['spans']['slowest'][number];

declare global {
  interface Window {
    tracepipeExplain: { items: number; links: string[] };
  }
}

/** Stalls shown at most (the longest), as in the text report. */
const STALLS = 10;
const CAUSE_NAMES: Record<string, string> = { gc: 'GC', stall: 'stall', children: 'children', cpu: 'CPU', queued: 'queued', unexplained: 'unexplained' };
const CAUSE_COLOURS: Record<string, string> = { gc: '#dc2626', stall: '#f59e0b', children: '#2563eb', cpu: '#16a34a', queued: '#7c3aed', unexplained: '#9ca3af' };

const explain = (JSON.parse(document.getElementById('tracepipe-data')!.textContent!) as ReportPageData).report.explain;
const links: string[] = [];

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ''): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text) el.textContent = text;
  return el;
}

/** The shares as a bar, each as wide as its share, named on hover. */
function shareBar(item: ExplainedItem): HTMLElement {
  const bar = element('div', 'shares');
  for (const s of item.shares) {
    if (s.ns <= 0) continue;
    const part = element('span', '');
    part.style.width = `${s.percent}%`;
    part.style.background = CAUSE_COLOURS[s.cause] ?? '#9ca3af';
    part.title = `${CAUSE_NAMES[s.cause] ?? s.cause}: ${(s.ns / 1e6).toFixed(2)} ms (${s.percent.toFixed(1)} %), from ${s.from}`;
    bar.append(part);
  }
  return bar;
}

function itemRow(item: ExplainedItem): HTMLElement {
  const row = element('div', 'explain-item');
  const href = `#t=${item.startNs / 1e9},${item.endNs / 1e9}`;
  links.push(href);
  const title = element('a', '', item.kind === 'span' ? `${item.span} ${item.label}` : `stall of thread ${item.threadId}'s event loop`);
  title.href = href;
  title.title = 'show it on the timeline';
  const when = element('span', 'when', ` ${item.durationMs.toFixed(2)} ms${item.unfinished ? ' (still going when the trace ended)' : ''} · thread ${item.threadId} · at ${(item.startNs / 1e9).toFixed(6)} s`);
  row.append(title, when, element('div', 'verdict', item.verdict.text), shareBar(item));
  return row;
}

const section = element('section', '');
section.id = 'explain';
section.append(
  element('h2', '', 'Why it was slow'),
  element(
    'p',
    'note',
    `tracepipe explain: the ${countOf(explain.spans.slowest.length, 'slowest span')} and the ${countOf(Math.min(STALLS, explain.stalls.items.length), 'longest event-loop stall')}, each split among ${explain.precedence.map((c) => CAUSE_NAMES[c]).join(' > ')} (each instant counts for the first that covers it). ${explain.sampler.note ?? 'CPU from Runtime.CpuSampler.'} Click an item to see it on the timeline; hover a bar for each share.`,
  ),
);
const legend = element('p', 'legend');
for (const c of explain.precedence) {
  const key = element('span', '', CAUSE_NAMES[c] ?? c);
  key.style.borderLeft = `12px solid ${CAUSE_COLOURS[c]}`;
  legend.append(key);
}
section.append(legend);
for (const item of explain.spans.slowest) section.append(itemRow(item));
if (explain.spans.slowest.length === 0) section.append(element('p', 'note', 'No finished spans in this trace.'));
const stalls = [...explain.stalls.items].sort((a, b) => b.durationMs - a.durationMs).slice(0, STALLS);
if (stalls.length > 0) section.append(element('h3', '', 'Longest event-loop stalls'));
for (const item of stalls) section.append(itemRow(item));
document.getElementById('report')!.prepend(section);
window.tracepipeExplain = { items: links.length, links };
