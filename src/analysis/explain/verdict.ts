import type { ExplainedItem, FunctionShare, GcSummary, RelatedSpan, Share } from './explanation.js';

const ms = (v: number): string => `${v.toFixed(1)} ms`;
const pct = (s: Share): string => `${Math.round(s.percent)} %`;
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** "Fetch GET /x": a span's type without its provider, and its label. */
export function spanTitle(s: { readonly span: string; readonly label: string }): string {
  const type = s.span.slice(s.span.lastIndexOf('/') + 1);
  return s.label ? `${type} ${s.label}` : type;
}

function inFunction(f: FunctionShare | undefined): string {
  if (!f) return '';
  return ` in \`${f.function}\`${f.caller ? ` ← \`${f.caller}\`` : ''}`;
}

function gcText(g: GcSummary): string {
  const kinds = Object.entries(g.byKind);
  const pauses = kinds.length === 1 ? plural(g.pauses, `${kinds[0]![0]} pause`) : `${g.pauses} pauses (${kinds.map(([k, n]) => `${n} ${k}`).join(', ')})`;
  return `${pauses}, longest ${ms(g.longestMs)}${kinds.length === 1 ? '' : ` ${g.longestKind}`}`;
}

function spanRef(r: RelatedSpan): string {
  return `\`${spanTitle(r)}\``;
}

/** The largest share of an item, in one line that names what it was. */
export function verdictText(item: Omit<ExplainedItem, 'verdict'>, share: Share): string {
  const p = pct(share);
  switch (share.cause) {
    case 'gc':
      return `${p} in GC: ${gcText(item.gc)}`;
    case 'stall': {
      const st = item.stalls!;
      const where = st.functions.length > 0 ? `, on CPU${inFunction(st.functions[0])}` : item.cpu.sampled ? ', with no CPU sample' : ` (${item.cpu.note})`;
      return `${p} in ${st.stalls === 1 ? 'an event-loop stall' : `${st.stalls} event-loop stalls`}${where}`;
    }
    case 'cpu': {
      const f = item.cpu.functions[0];
      return `${p} on CPU${f ? `, most${inFunction(f)} (${Math.round(f.percent)} % self)` : ''}`;
    }
    case 'children': {
      const c = item.children!;
      const first = c.top[0]!;
      const took = `took ${ms(first.durationMs)}${first.unfinished ? ' and never ended' : ''}`;
      return `${p} waiting: ${c.count === 1 ? `its child ${spanRef(first)} ${took}` : `${c.count} children, most of all ${spanRef(first)}, which ${took}`}`;
    }
    case 'queued': {
      const q = item.concurrency!;
      const first = q.longestBefore!;
      const type = item.span.slice(item.span.lastIndexOf('/') + 1);
      return `${p} queued behind ${q.before === 1 ? `an earlier ${type}` : `${q.before} earlier ${type} spans`} still running: ${spanRef(first)} began ${ms((item.startNs - first.startNs) / 1e6)} before it and took ${ms(first.durationMs)}`;
    }
    case 'unexplained':
      if (!item.cpu.sampled) return `${p} unexplained: ${item.cpu.note}`;
      return item.kind === 'stall'
        ? `${p} blocked with no CPU sample (a synchronous system call, or the thread was not running)`
        : `${p} waiting off CPU on nothing traced (I/O, timers or locks outside any child span)`;
  }
}
