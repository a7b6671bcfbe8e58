import type { TraceEvent } from '../format/trace-event.js';
import { withSourceMaps, type SourceMapSummary } from './source-maps.js';

/** A function as V8's profiler names it (Runtime.CpuSampler/Frame). Line and column are 1-based, 0 when unknown. */
export interface CpuFrame {
  readonly functionName: string;
  readonly url: string;
  readonly line: number;
  readonly column: number;
  /** Where V8 saw the function, when a source map put this frame at its original location (withSourceMaps). */
  readonly generated?: CpuFrame;
}

/** V8's own entries: time not spent in a JavaScript or native function of the program. */
export const PROGRAM_FRAME = '(program)';
export const GC_FRAME = '(garbage collector)';
export const IDLE_FRAME = '(idle)';

/** The samples of one thread, in time order: when (ns on the trace clock), which stack, how long each stands for. */
export interface ThreadSamples {
  readonly thread: number;
  readonly timestampNs: Float64Array;
  /** Index into CpuProfile.stacks; -1 when the stream never defined it (a ring that dropped the definition). */
  readonly stack: Int32Array;
  /** ns each sample stands for: the gap to the thread's next sample, at most MAX_WEIGHT_INTERVALS intervals. */
  readonly weightNs: Float64Array;
  /** The sampling interval (ns) the thread's last SamplerStarted gave, or the median gap. */
  readonly intervalNs: number;
}

export interface CpuProfile {
  /** Distinct frames, each once (by name, URL, line and column), whichever thread wrote it. */
  readonly frames: readonly CpuFrame[];
  /** Distinct stacks: `frame` (index into frames) called from `parent` (index into stacks, -1 for the outermost). */
  readonly stackFrame: Int32Array;
  readonly stackParent: Int32Array;
  readonly threads: ReadonlyMap<number, ThreadSamples>;
  /** Samples whose stack the stream did not define (counted, shown as unknown). */
  readonly unresolvedSamples: number;
  /** Samples lost before they were written, by reason (Runtime.CpuSampler/SamplesLost). */
  readonly lost: Readonly<Record<string, number>>;
  /** Sampler restarts (Runtime.CpuSampler/SamplerRestarted). */
  readonly restarts: number;
  /** Set when source maps were applied (withSourceMaps): what was mapped and what could not be. */
  readonly sourceMaps?: SourceMapSummary;
}

/** How views want the profile finished. */
export interface ViewOptions {
  /** Frames of source-mapped scripts at their original location (default true; `--no-source-maps` turns it off). */
  readonly sourceMaps?: boolean;
}

/**
 * A sample stands for the time until the thread's next one; a longer gap than this many intervals
 * means the thread was not sampled (descheduled, or sampling stopped), and counts as unsampled.
 */
export const MAX_WEIGHT_INTERVALS = 4;

const PROVIDER = 'Runtime.CpuSampler';

/**
 * Builds a CpuProfile from a trace's events, fed in stream order with `add`. Frames and stacks are
 * interned by the thread that wrote them (docs/FORMAT.md, "CPU samples"); here they are merged into
 * one table by content, so samples of every writer share one set of indexes.
 */
export class CpuProfileBuilder {
  private readonly frames: CpuFrame[] = [];
  private readonly frameIndex = new Map<string, number>();
  private stackFrame: Int32Array = new Int32Array(256);
  private stackParent: Int32Array = new Int32Array(256);
  private stacks = 0;
  private readonly stackIndex = new Map<string, number>();
  /** Per writing thread: stream frame id → frame index, stream stack id → stack index. */
  private readonly writerFrames = new Map<number, Map<number, number>>();
  private readonly writerStacks = new Map<number, Map<number, number>>();
  private readonly samples = new Map<number, { ts: number[]; stack: number[]; intervalNs: number }>();
  private unresolved = 0;
  private readonly lost: Record<string, number> = {};
  private restarts = 0;

  /** Takes the event if it is the sampler's; returns whether it was. */
  add(e: TraceEvent): boolean {
    if (e.provider !== PROVIDER) return false;
    const f = e.fields;
    switch (e.name) {
      case 'Frame':
        this.defineFrame(e.threadId, f.frameId as number, { functionName: f.functionName as string, url: f.url as string, line: f.line as number, column: f.column as number });
        break;
      case 'Stack':
        this.defineStack(e.threadId, f.stackId as number, f.frameId as number, f.parentId as number);
        break;
      case 'Sample': {
        // Stack 0 is a sample with no frame at all (V8 gave only its root): counted, attributed to nothing.
        const stack = f.stackId === 0 ? -1 : (this.writerStacks.get(e.threadId)?.get(f.stackId as number) ?? -1);
        if (stack < 0 && f.stackId !== 0) this.unresolved++;
        const t = this.thread(f.thread as number);
        t.ts.push(e.timestampNs);
        t.stack.push(stack);
        break;
      }
      case 'SamplerStarted':
        this.thread(f.thread as number).intervalNs = (f.intervalUs as number) * 1000;
        break;
      case 'SamplesLost':
        this.lost[f.reason as string] = (this.lost[f.reason as string] ?? 0) + (f.count as number);
        break;
      case 'SamplerRestarted':
        this.restarts++;
        break;
    }
    return true;
  }

  finish(): CpuProfile {
    const threads = new Map<number, ThreadSamples>();
    for (const [thread, s] of this.samples) threads.set(thread, threadSamples(thread, s.ts, s.stack, s.intervalNs));
    return {
      frames: this.frames,
      stackFrame: this.stackFrame.subarray(0, this.stacks),
      stackParent: this.stackParent.subarray(0, this.stacks),
      threads,
      unresolvedSamples: this.unresolved,
      lost: this.lost,
      restarts: this.restarts,
    };
  }

  /**
   * The profile as every view (exports, report) shows it: `finish()`, then source maps applied unless
   * `sourceMaps` is false. Views call this one, so their frames agree (a view that takes frames as
   * they come maps each with a SourceMapper instead); their notes include sourceMapNotes(profile.sourceMaps).
   */
  finishForViews(options: ViewOptions = {}): CpuProfile {
    const profile = this.finish();
    return options.sourceMaps === false ? profile : withSourceMaps(profile);
  }

  private thread(thread: number): { ts: number[]; stack: number[]; intervalNs: number } {
    let t = this.samples.get(thread);
    if (!t) this.samples.set(thread, (t = { ts: [], stack: [], intervalNs: 0 }));
    return t;
  }

  private defineFrame(writer: number, id: number, frame: CpuFrame): void {
    const key = `${frame.functionName}\0${frame.url}\0${frame.line}\0${frame.column}`;
    let index = this.frameIndex.get(key);
    if (index === undefined) {
      index = this.frames.length;
      this.frames.push(frame);
      this.frameIndex.set(key, index);
    }
    mapOf(this.writerFrames, writer).set(id, index);
  }

  private defineStack(writer: number, id: number, frameId: number, parentId: number): void {
    const frame = this.writerFrames.get(writer)?.get(frameId);
    const parent = parentId === 0 ? -1 : (this.writerStacks.get(writer)?.get(parentId) ?? -2);
    // A stack on an undefined frame or parent (lost with a ring's oldest chunks) stays undefined.
    if (frame === undefined || parent === -2) return;
    const key = `${frame}:${parent}`;
    let index = this.stackIndex.get(key);
    if (index === undefined) {
      index = this.stacks++;
      if (index === this.stackFrame.length) {
        this.stackFrame = grow(this.stackFrame);
        this.stackParent = grow(this.stackParent);
      }
      this.stackFrame[index] = frame;
      this.stackParent[index] = parent;
      this.stackIndex.set(key, index);
    }
    mapOf(this.writerStacks, writer).set(id, index);
  }
}

function mapOf(maps: Map<number, Map<number, number>>, writer: number): Map<number, number> {
  let m = maps.get(writer);
  if (!m) maps.set(writer, (m = new Map()));
  return m;
}

function grow(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

function threadSamples(thread: number, ts: number[], stack: number[], givenIntervalNs: number): ThreadSamples {
  // Writers of one thread (the thread itself, its watchdog during a stall) may interleave: sort by time.
  const order = ts.map((_, i) => i).sort((a, b) => ts[a]! - ts[b]! || a - b);
  const timestampNs = Float64Array.from(order, (i) => ts[i]!);
  const stacks = Int32Array.from(order, (i) => stack[i]!);
  const gaps = [];
  for (let i = 1; i < timestampNs.length; i++) gaps.push(timestampNs[i]! - timestampNs[i - 1]!);
  gaps.sort((a, b) => a - b);
  const intervalNs = givenIntervalNs > 0 ? givenIntervalNs : (gaps[gaps.length >> 1] ?? 1e6);
  const weightNs = new Float64Array(timestampNs.length);
  const cap = intervalNs * MAX_WEIGHT_INTERVALS;
  for (let i = 0; i < timestampNs.length; i++) {
    weightNs[i] = i + 1 < timestampNs.length ? Math.min(timestampNs[i + 1]! - timestampNs[i]!, cap) : intervalNs;
  }
  return { thread, timestampNs, stack: stacks, weightNs, intervalNs };
}

/** The frames of `stack`, innermost first (empty for the root or an unresolved stack). */
export function framesOf(profile: CpuProfile, stack: number): number[] {
  const out: number[] = [];
  for (let s = stack; s >= 0; s = profile.stackParent[s]!) out.push(profile.stackFrame[s]!);
  return out;
}

/** Self and total time of one frame over a set of samples. */
export interface FunctionTime {
  readonly frame: number;
  selfNs: number;
  totalNs: number;
  selfSamples: number;
}

/**
 * Self and total time per frame of `thread`'s samples in [fromNs, toNs) (all of them by default), the
 * largest self time first. A recursive frame counts once per sample in its total.
 */
export function functionTimes(profile: CpuProfile, threads: Iterable<ThreadSamples> = profile.threads.values(), fromNs = -Infinity, toNs = Infinity): { functions: FunctionTime[]; sampledNs: number; samples: number } {
  const byFrame = new Map<number, FunctionTime>();
  const seen = new Set<number>();
  let sampledNs = 0;
  let samples = 0;
  for (const t of threads) {
    const [lo, hi] = sampleRange(t, fromNs, toNs);
    for (let i = lo; i < hi; i++) {
      const w = t.weightNs[i]!;
      sampledNs += w;
      samples++;
      const stack = t.stack[i]!;
      seen.clear();
      for (let s = stack; s >= 0; s = profile.stackParent[s]!) {
        const frame = profile.stackFrame[s]!;
        let ft = byFrame.get(frame);
        if (!ft) byFrame.set(frame, (ft = { frame, selfNs: 0, totalNs: 0, selfSamples: 0 }));
        if (s === stack) {
          ft.selfNs += w;
          ft.selfSamples++;
        }
        if (!seen.has(frame)) ft.totalNs += w;
        seen.add(frame);
      }
    }
  }
  const functions = [...byFrame.values()].sort((a, b) => b.selfNs - a.selfNs || b.totalNs - a.totalNs);
  return { functions, sampledNs, samples };
}

/** The index range [lo, hi) of `t`'s samples with fromNs <= timestamp < toNs. */
export function sampleRange(t: ThreadSamples, fromNs: number, toNs: number): [number, number] {
  return [lowerBound(t.timestampNs, fromNs), lowerBound(t.timestampNs, toNs)];
}

function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** "name (file.js:12)" for people; anonymous functions as "(anonymous)". */
export function frameLabel(frame: CpuFrame): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const file = frame.url.slice(frame.url.lastIndexOf('/') + 1);
  return frame.line > 0 ? `${name} (${file}:${frame.line})` : `${name} (${file})`;
}

/**
 * Who called `frame` when it was the innermost frame, over `t`'s samples in [fromNs, toNs): self
 * time per calling frame (-1: it was outermost), the largest first.
 */
export function callersOf(profile: CpuProfile, t: ThreadSamples, frame: number, fromNs = -Infinity, toNs = Infinity): { frame: number; selfNs: number }[] {
  const byCaller = new Map<number, number>();
  const [lo, hi] = sampleRange(t, fromNs, toNs);
  for (let i = lo; i < hi; i++) {
    const s = t.stack[i]!;
    if (s < 0 || profile.stackFrame[s] !== frame) continue;
    const parent = profile.stackParent[s]!;
    const caller = parent < 0 ? -1 : profile.stackFrame[parent]!;
    byCaller.set(caller, (byCaller.get(caller) ?? 0) + t.weightNs[i]!);
  }
  return [...byCaller].map(([f, selfNs]) => ({ frame: f, selfNs })).sort((a, b) => b.selfNs - a.selfNs);
}
