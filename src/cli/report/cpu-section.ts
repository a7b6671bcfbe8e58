import { cpuDuring } from '../../analysis/cpu-during.js';
import { type CpuProfile, type FunctionTime, frameLabel, functionTimes } from '../../analysis/cpu-profile.js';
import { sourceMapNotes } from '../../analysis/source-maps.js';
import { msToNs } from '../../schema/milliseconds.js';
import { countOf } from '../format-count.js';
import { printable } from '../printable.js';

/** One function's line in the CPU section: times in ms, shares in percent of the thread's sampled time. */
export interface CpuFunctionRow {
  /** "name (file.js:12)". */
  function: string;
  functionName: string;
  url: string;
  line: number;
  column: number;
  selfMs: number;
  selfPercent: number;
  selfSamples: number;
  totalMs: number;
  totalPercent: number;
  totalSamples: number;
}

export interface CpuThreadSection {
  thread: number;
  samples: number;
  sampledMs: number;
  /** The sampling interval (µs) the sampler gave, or the median gap between samples. */
  intervalUs: number;
  /** The functions with the most self time (of those with any), and with the most total time (up to TOP each). */
  bySelf: CpuFunctionRow[];
  byTotal: CpuFunctionRow[];
}

/** `report`'s CPU section (Runtime.CpuSampler): the top functions of each sampled thread, and what was not sampled. */
export interface CpuSection {
  samples: number;
  sampledMs: number;
  threads: CpuThreadSection[];
  /** Samples whose stack the trace never defined: counted in the times, in no function. */
  unresolvedSamples: number;
  /** Samples lost before they were written, in all and by reason. */
  lostSamples: number;
  lost: Record<string, number>;
  /** Stuck profilers replaced. */
  restarts: number;
  /** What source maps did to the frames' locations, and what could not be used (sourceMapNotes). */
  sourceMaps: string[];
}

/** What was on CPU during one stall or span (cpuDuring): the functions by self time, their share of the sampled time. */
export interface OnCpu {
  /** False when the thread was never sampled in this trace. */
  threadSampled: boolean;
  samples: number;
  sampledMs: number;
  /** The interval's length; intervalMs - sampledMs is time no sample stands for. */
  intervalMs: number;
  /** Sampled time in no function (a stack the trace does not define, or no frame at all). */
  noStackMs: number;
  /** The top ON_CPU_TOP functions by self time; `percent` of sampledMs. */
  functions: Array<{ function: string; selfMs: number; percent: number; samples: number }>;
  /** Self time of the functions past the top ones. */
  otherFunctions: number;
  otherMs: number;
}

const TOP = 10;
const ON_CPU_TOP = 5;
/** Functions named in an "on CPU" line; the rest are summed. */
const ON_CPU_SHOWN = 3;

const percentOf = (part: number, whole: number): number => (whole > 0 ? (100 * part) / whole : 0);

function row(profile: CpuProfile, f: FunctionTime, sampledNs: number): CpuFunctionRow {
  const frame = profile.frames[f.frame]!;
  return {
    function: frameLabel(frame),
    functionName: frame.functionName,
    url: frame.url,
    line: frame.line,
    column: frame.column,
    selfMs: f.selfNs / 1e6,
    selfPercent: percentOf(f.selfNs, sampledNs),
    selfSamples: f.selfSamples,
    totalMs: f.totalNs / 1e6,
    totalPercent: percentOf(f.totalNs, sampledNs),
    totalSamples: f.totalSamples,
  };
}

/** The CPU section of a trace's profile; undefined when the trace has nothing of the sampler. */
export function cpuSection(profile: CpuProfile): CpuSection | undefined {
  const lostSamples = Object.values(profile.lost).reduce((n, c) => n + c, 0);
  if (profile.threads.size === 0 && lostSamples === 0 && profile.restarts === 0) return undefined;
  const threads = [...profile.threads.values()].sort((a, b) => a.thread - b.thread).map((t): CpuThreadSection => {
    const { functions, sampledNs, samples } = functionTimes(profile, [t]);
    const byTotal = [...functions].sort((a, b) => b.totalNs - a.totalNs || b.selfNs - a.selfNs);
    return {
      thread: t.thread,
      samples,
      sampledMs: sampledNs / 1e6,
      intervalUs: t.intervalNs / 1e3,
      bySelf: functions.filter((f) => f.selfSamples > 0).slice(0, TOP).map((f) => row(profile, f, sampledNs)),
      byTotal: byTotal.slice(0, TOP).map((f) => row(profile, f, sampledNs)),
    };
  });
  return {
    samples: threads.reduce((n, t) => n + t.samples, 0),
    sampledMs: threads.reduce((n, t) => n + msToNs(t.sampledMs), 0) / 1e6,
    threads,
    unresolvedSamples: profile.unresolvedSamples,
    lostSamples,
    lost: { ...profile.lost },
    restarts: profile.restarts,
    sourceMaps: profile.sourceMaps ? sourceMapNotes(profile.sourceMaps) : [],
  };
}

/**
 * What `thread` ran in [fromNs, toNs); undefined when the trace has no CPU samples at all (then there
 * is nothing to say about any interval, and the report says so once, in its CPU section).
 */
export function onCpu(profile: CpuProfile, thread: number, fromNs: number, toNs: number): OnCpu | undefined {
  if (profile.threads.size === 0) return undefined;
  const c = cpuDuring(profile, thread, fromNs, toNs);
  const shown = c.functions.slice(0, ON_CPU_TOP);
  const rest = c.functions.slice(ON_CPU_TOP);
  return {
    threadSampled: c.threadSampled,
    samples: c.samples,
    sampledMs: c.sampledNs / 1e6,
    intervalMs: (toNs - fromNs) / 1e6,
    noStackMs: c.noStackNs / 1e6,
    functions: shown.map((f) => ({ function: frameLabel(profile.frames[f.frame]!), selfMs: f.selfNs / 1e6, percent: percentOf(f.selfNs, c.sampledNs), samples: f.selfSamples })),
    otherFunctions: rest.length,
    otherMs: rest.reduce((n, f) => n + f.selfNs, 0) / 1e6,
  };
}

/** A share for people: whole percents, a decimal below 1 % ("91 %", "0.4 %"). */
const share = (percent: number): string => `${percent >= 1 || percent === 0 ? Math.round(percent) : percent.toFixed(1)} %`;

/** "on CPU (291 samples, 291.00 of 300.00 ms sampled): busyLoop (app.js:12) 91 %, (garbage collector) 6 %, 2 others 3 %". */
export function onCpuLine(c: OnCpu, thread: number): string {
  if (!c.threadSampled) return `on CPU: thread ${thread} was not sampled`;
  if (c.samples === 0) return 'on CPU: no samples in this interval';
  const named = c.functions.slice(0, ON_CPU_SHOWN).map((f) => `${printable(f.function)} ${share(f.percent)}`);
  const restFunctions = c.functions.length - Math.min(ON_CPU_SHOWN, c.functions.length) + c.otherFunctions;
  const restMs = c.functions.slice(ON_CPU_SHOWN).reduce((n, f) => n + f.selfMs, 0) + c.otherMs;
  if (restFunctions > 0) named.push(`${restFunctions} other${restFunctions === 1 ? '' : 's'} ${share(percentOf(restMs, c.sampledMs))}`);
  if (c.noStackMs > 0) named.push(`no stack ${share(percentOf(c.noStackMs, c.sampledMs))}`);
  return `on CPU (${countOf(c.samples, 'sample')}, ${c.sampledMs.toFixed(2)} of ${c.intervalMs.toFixed(2)} ms sampled): ${named.join(', ')}`;
}

const ms = (v: number): string => `${v.toFixed(2)} ms`;

function tableLines(title: string, rows: readonly CpuFunctionRow[]): string[] {
  const lines = [`    ${title}:`, `    ${'self'.padStart(12)} ${'%'.padStart(7)} ${'samples'.padStart(9)} ${'total'.padStart(12)} ${'%'.padStart(7)} ${'samples'.padStart(9)}  function`];
  for (const r of rows) {
    lines.push(`    ${ms(r.selfMs).padStart(12)} ${`${r.selfPercent.toFixed(1)}%`.padStart(7)} ${String(r.selfSamples).padStart(9)} ${ms(r.totalMs).padStart(12)} ${`${r.totalPercent.toFixed(1)}%`.padStart(7)} ${String(r.totalSamples).padStart(9)}  ${printable(r.function)}`);
  }
  return lines;
}

/** The CPU section as `report` prints it. */
export function cpuSectionLines(c: CpuSection | undefined): string[] {
  if (!c) return ['CPU samples (Runtime.CpuSampler): none recorded'];
  const notes: string[] = [];
  if (c.lostSamples > 0) notes.push(`${countOf(c.lostSamples, 'sample')} lost (${Object.entries(c.lost).map(([reason, n]) => `${printable(reason)}: ${n.toLocaleString('en-US')}`).join(', ')})`);
  if (c.unresolvedSamples > 0) notes.push(`${countOf(c.unresolvedSamples, 'sample')} with a stack the trace does not define (counted as unresolved)`);
  if (c.restarts > 0) notes.push(`the sampler was restarted ${countOf(c.restarts, 'time')} (a stuck profiler replaced)`);
  const lines = [`CPU samples (Runtime.CpuSampler): ${countOf(c.samples, 'sample')}, ${ms(c.sampledMs)} sampled on ${countOf(c.threads.length, 'thread')}`];
  for (const n of [...notes, ...c.sourceMaps]) lines.push(`  ${printable(n)}`);
  for (const t of c.threads) {
    lines.push(`  thread ${t.thread}: ${countOf(t.samples, 'sample')} (interval ${Math.round(t.intervalUs)} µs), ${ms(t.sampledMs)} sampled; shares of that time`);
    lines.push(...tableLines('top functions by self time', t.bySelf), ...tableLines('top functions by total time', t.byTotal));
  }
  return lines;
}
