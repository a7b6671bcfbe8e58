import { cpuDuring } from '../cpu-during.js';
import { callersOf, type CpuProfile, frameLabel, IDLE_FRAME, MAX_WEIGHT_INTERVALS, sampleRange, samplesCovering, type ThreadSamples } from '../cpu-profile.js';
import type { CpuSummary, FunctionShare } from './explanation.js';
import { type Intervals, measure } from './interval-set.js';
import type { Span } from './overlap-index.js';

/** Functions listed per item at most. */
const TOP_FUNCTIONS = 5;

export const NO_SAMPLER_NOTE = 'CPU attribution needs Runtime.CpuSampler (the trace has no CPU samples)';

/**
 * Which samples the second pass gives the CpuProfileBuilder, so that it holds the samples of the
 * items' intervals and not those of the whole trace, and still weighs each of them exactly as a profile
 * of every sample would: a sample weighs the gap to its thread's next one, at most MAX_WEIGHT_INTERVALS
 * intervals. So each item's interval is kept widened by that cap on both sides (a sample just before
 * it reaches into it; the next sample after its last one sets that one's weight), plus one sample after
 * the last window of a thread (past the cap: the last kept sample then weighs the cap, as it would with
 * every sample, instead of the one interval a thread's very last sample weighs). A thread whose
 * interval no SamplerStarted gave is weighed by its median gap: all of its samples are kept.
 */
export class SampleFilter {
  private readonly windows = new Map<number, number[]>();
  private readonly everything = new Set<number>();
  private readonly pastLast = new Set<number>();

  constructor(items: Iterable<Span & { readonly threadId: number }>, sampled: ReadonlyMap<number, { readonly intervalNs: number }>) {
    const byThread = new Map<number, (Span & { readonly threadId: number })[]>();
    for (const it of items) {
      const s = sampled.get(it.threadId);
      if (!s) continue;
      if (s.intervalNs === 0) this.everything.add(it.threadId);
      else {
        const list = byThread.get(it.threadId);
        if (list) list.push(it);
        else byThread.set(it.threadId, [it]);
      }
    }
    for (const [thread, list] of byThread) {
      const margin = sampled.get(thread)!.intervalNs * MAX_WEIGHT_INTERVALS;
      list.sort((a, b) => a.startNs - b.startNs);
      const w: number[] = [];
      for (const it of list) {
        const s = it.startNs - margin;
        const e = it.endNs + margin;
        if (w.length > 0 && s <= w[w.length - 1]!) w[w.length - 1] = Math.max(w[w.length - 1]!, e);
        else w.push(s, e);
      }
      this.windows.set(thread, w);
    }
  }

  keeps(thread: number, timestampNs: number): boolean {
    if (this.everything.has(thread)) return true;
    const w = this.windows.get(thread);
    if (!w) return false;
    let lo = 0;
    let hi = w.length >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (w[2 * mid]! <= timestampNs) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && timestampNs <= w[2 * lo - 1]!) return true;
    if (timestampNs > w[w.length - 1]! && !this.pastLast.has(thread)) {
      this.pastLast.add(thread);
      return true;
    }
    return false;
  }
}

/** The frames V8 names (idle): the thread was waiting, not running. */
export function idleFrames(profile: CpuProfile): Set<number> {
  const out = new Set<number>();
  profile.frames.forEach((f, i) => f.functionName === IDLE_FRAME && f.url === '' && out.add(i));
  return out;
}

/**
 * The time in [fromNs, toNs) the thread was on CPU by its samples: each sample stands for the time
 * to its next one (its weight; samplesCovering, as every view counts it), and counts unless its
 * innermost frame is (idle). A sample without a stack (V8 gave only its root, or its definition was
 * lost) counts as on CPU in no known function.
 */
export function cpuCover(profile: CpuProfile, idle: ReadonlySet<number>, t: ThreadSamples, fromNs: number, toNs: number): number[] {
  const cover: number[] = [];
  const [lo, hi] = samplesCovering(t, fromNs, toNs);
  for (let i = lo; i < hi; i++) {
    const stack = t.stack[i]!;
    if (stack >= 0 && idle.has(profile.stackFrame[stack]!)) continue;
    const ts = t.timestampNs[i]!;
    const s = Math.max(fromNs, ts);
    const e = Math.min(toNs, ts + t.weightNs[i]!);
    if (e <= s) continue;
    // Samples are in time order and a weight never passes the next sample: appending keeps the set sorted.
    if (cover.length > 0 && s <= cover[cover.length - 1]!) cover[cover.length - 1] = Math.max(cover[cover.length - 1]!, e);
    else cover.push(s, e);
  }
  return cover;
}

/** Whether the thread has a sample within a weight's reach of [fromNs, toNs). */
export function sampledAround(t: ThreadSamples | undefined, fromNs: number, toNs: number): boolean {
  if (!t) return false;
  const cap = t.intervalNs * MAX_WEIGHT_INTERVALS;
  const [lo, hi] = sampleRange(t, fromNs - cap, toNs + cap);
  return hi > lo;
}

/**
 * The top functions by self time over `ranges` of the thread's samples (cpuDuring per range, the
 * report's own figures, added up), (idle) left out, each with the function it was most often called
 * from.
 */
export function functionsWithin(profile: CpuProfile, idle: ReadonlySet<number>, t: ThreadSamples, ranges: Intervals, durationNs: number): FunctionShare[] {
  const self = new Map<number, { ns: number; samples: number }>();
  for (let i = 0; i < ranges.length; i += 2) {
    for (const f of cpuDuring(profile, t.thread, ranges[i]!, ranges[i + 1]!).functions) {
      if (idle.has(f.frame)) continue;
      const s = self.get(f.frame);
      if (s) {
        s.ns += f.selfNs;
        s.samples += f.selfSamples;
      } else self.set(f.frame, { ns: f.selfNs, samples: f.selfSamples });
    }
  }
  const top = [...self].sort((a, b) => b[1].ns - a[1].ns).slice(0, TOP_FUNCTIONS);
  return top.map(([frame, s]) => {
    const callers = new Map<number, number>();
    for (let i = 0; i < ranges.length; i += 2) for (const c of callersOf(profile, t, frame, ranges[i]!, ranges[i + 1]!)) callers.set(c.frame, (callers.get(c.frame) ?? 0) + c.selfNs);
    const caller = [...callers].sort((a, b) => b[1] - a[1])[0];
    return {
      function: frameLabel(profile.frames[frame]!),
      ...(caller && caller[0] >= 0 ? { caller: frameLabel(profile.frames[caller[0]]!) } : {}),
      selfMs: s.ns / 1e6,
      selfSamples: s.samples,
      percent: durationNs > 0 ? (100 * s.ns) / durationNs : 0,
    };
  });
}

/** The item's CPU summary and on-CPU time, or why there is none. */
export function cpuShare(profile: CpuProfile, idle: ReadonlySet<number>, samplerPresent: boolean, threadId: number, fromNs: number, toNs: number): { cover: number[]; summary: CpuSummary } {
  const t = profile.threads.get(threadId);
  if (!t || !sampledAround(t, fromNs, toNs)) {
    const note = samplerPresent ? `thread ${threadId} was not sampled during it` : NO_SAMPLER_NOTE;
    return { cover: [], summary: { sampled: false, note, samples: 0, onCpuMs: 0, offCpuMs: 0, functions: [] } };
  }
  const cover = cpuCover(profile, idle, t, fromNs, toNs);
  const [lo, hi] = samplesCovering(t, fromNs, toNs);
  const onCpuNs = measure(cover);
  return { cover, summary: { sampled: true, samples: hi - lo, onCpuMs: onCpuNs / 1e6, offCpuMs: (toNs - fromNs - onCpuNs) / 1e6, functions: functionsWithin(profile, idle, t, [fromNs, toNs], toNs - fromNs) } };
}
