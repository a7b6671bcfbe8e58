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
/** What the views show for samples whose stack the stream did not define: counted there, never guessed. */
export const UNRESOLVED_FRAME = '(unresolved stack)';

/** A sample's stack when V8 gave no frame at all, only its root: the sample counts, on no function. */
export const NO_FRAME = -1;
/** A sample's stack when the stream never defined its stack id: counted as unresolved, never guessed. */
export const UNRESOLVED_STACK = -2;

/** The samples of one thread, in time order: when (ns on the trace clock), which stack, how long each stands for. */
export interface ThreadSamples {
  readonly thread: number;
  readonly timestampNs: Float64Array;
  /** Index into CpuProfile.stacks; NO_FRAME for a sample of no frame, UNRESOLVED_STACK when the stream never defined it (a ring that dropped the definition). */
  readonly stack: Int32Array;
  /** ns each sample stands for: the gap to the thread's next sample, at most MAX_WEIGHT_INTERVALS intervals. */
  readonly weightNs: Float64Array;
  /** The sampling interval (ns) the thread's last SamplerStarted gave, or the median gap. */
  readonly intervalNs: number;
}

/** The frames and stacks of a profile: what resolves a sample's stack index. */
export interface CpuStackTable {
  /** Distinct frames, each once (by name, URL, line and column), whichever thread wrote it. */
  readonly frames: readonly CpuFrame[];
  /** Distinct stacks: `frame` (index into frames) called from `parent` (index into stacks, -1 for the outermost). */
  readonly stackFrame: Int32Array;
  readonly stackParent: Int32Array;
}

export interface CpuProfile extends CpuStackTable {
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

/** Takes each sample as it is read, its stack resolved (or NO_FRAME, UNRESOLVED_STACK): for views that stream. */
export type SampleSink = (thread: number, timestampNs: number, stack: number) => void;

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
  /** frame → parent stack → stack index: numbers only (a string key per Stack event cost more than the rest of the reading). */
  private readonly stackIndex = new Map<number, Map<number, number>>();
  /** Per writing thread: stream frame id → frame index, stream stack id → stack index. */
  private readonly writerFrames = new Map<number, Map<number, number>>();
  private readonly writerStacks = new Map<number, Map<number, number>>();
  private readonly samples = new Map<number, SampleColumns>();
  private unresolved = 0;
  /** A Map, since reasons come from the trace ('__proto__' is a reason like any other there). */
  private readonly lost = new Map<string, number>();
  private restarts = 0;

  /**
   * With a `sink`, each sample goes to it as it is read and none is kept, so memory holds only the
   * frames and stacks (a view that streams, such as a timeline); `finish()` then has no samples.
   */
  constructor(private readonly sink?: SampleSink) {}

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
        const stack = f.stackId === 0 ? NO_FRAME : (this.writerStacks.get(e.threadId)?.get(f.stackId as number) ?? UNRESOLVED_STACK);
        if (stack === UNRESOLVED_STACK) this.unresolved++;
        if (this.sink) {
          this.sink(f.thread as number, e.timestampNs, stack);
          break;
        }
        this.thread(f.thread as number).push(e.timestampNs, stack);
        break;
      }
      case 'SamplerStarted':
        this.thread(f.thread as number).intervalNs = (f.intervalUs as number) * 1000;
        break;
      case 'SamplesLost':
        this.lost.set(f.reason as string, (this.lost.get(f.reason as string) ?? 0) + (f.count as number));
        break;
      case 'SamplerRestarted':
        this.restarts++;
        break;
    }
    return true;
  }

  finish(): CpuProfile {
    const threads = new Map<number, ThreadSamples>();
    for (const [thread, s] of this.samples) threads.set(thread, threadSamples(thread, s));
    return {
      frames: this.frames,
      stackFrame: this.stackFrame.subarray(0, this.stacks),
      stackParent: this.stackParent.subarray(0, this.stacks),
      threads,
      unresolvedSamples: this.unresolved,
      // Object.fromEntries defines each key as an own property, '__proto__' included.
      lost: Object.fromEntries(this.lost),
      restarts: this.restarts,
    };
  }

  /** The frames and stacks defined so far (a stack index, once given, keeps its frames). */
  stackTable(): CpuStackTable {
    return { frames: this.frames, stackFrame: this.stackFrame.subarray(0, this.stacks), stackParent: this.stackParent.subarray(0, this.stacks) };
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

  private thread(thread: number): SampleColumns {
    let t = this.samples.get(thread);
    if (!t) this.samples.set(thread, (t = new SampleColumns()));
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
    const byParent = mapOf(this.stackIndex, frame);
    let index = byParent.get(parent);
    if (index === undefined) {
      index = this.stacks++;
      if (index === this.stackFrame.length) {
        this.stackFrame = grow(this.stackFrame);
        this.stackParent = grow(this.stackParent);
      }
      this.stackFrame[index] = frame;
      this.stackParent[index] = parent;
      byParent.set(parent, index);
    }
    mapOf(this.writerStacks, writer).set(id, index);
  }
}

function mapOf(maps: Map<number, Map<number, number>>, key: number): Map<number, number> {
  let m = maps.get(key);
  if (!m) maps.set(key, (m = new Map()));
  return m;
}

function grow<T extends Int32Array | Float64Array>(a: T): T {
  const b = new (a.constructor as new (n: number) => T)(a.length * 2);
  b.set(a);
  return b;
}

/**
 * A thread's samples as read, in typed arrays that double as they fill: 12 bytes a sample, so a
 * profile of millions of samples (hours at 1 ms) stays a few tens of MB.
 */
class SampleColumns {
  ts = new Float64Array(256);
  stack = new Int32Array(256);
  length = 0;
  /** The interval the thread's last SamplerStarted gave (ns), 0 if none. */
  intervalNs = 0;

  push(ts: number, stack: number): void {
    if (this.length === this.ts.length) {
      this.ts = grow(this.ts);
      this.stack = grow(this.stack);
    }
    this.ts[this.length] = ts;
    this.stack[this.length++] = stack;
  }
}

function threadSamples(thread: number, s: SampleColumns): ThreadSamples {
  let timestampNs = s.ts.subarray(0, s.length);
  let stacks = s.stack.subarray(0, s.length);
  if (!ascending(timestampNs)) {
    // Writers of one thread (the thread itself, its watchdog during a stall) may interleave: sort by time, stably.
    const ts = timestampNs;
    const stack = stacks;
    const order = new Uint32Array(s.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    order.sort((a, b) => ts[a]! - ts[b]! || a - b);
    timestampNs = Float64Array.from(order, (i) => ts[i]!);
    stacks = Int32Array.from(order, (i) => stack[i]!);
  }
  const intervalNs = s.intervalNs > 0 ? s.intervalNs : medianGap(timestampNs);
  const weightNs = new Float64Array(timestampNs.length);
  const cap = intervalNs * MAX_WEIGHT_INTERVALS;
  for (let i = 0; i < timestampNs.length; i++) {
    weightNs[i] = i + 1 < timestampNs.length ? Math.min(timestampNs[i + 1]! - timestampNs[i]!, cap) : intervalNs;
  }
  return { thread, timestampNs, stack: stacks, weightNs, intervalNs };
}

function ascending(a: Float64Array): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! < a[i - 1]!) return false;
  return true;
}

/** The median gap between samples (the upper one of an even count), 1 ms with fewer than two samples. */
function medianGap(ts: Float64Array): number {
  if (ts.length < 2) return 1e6;
  const gaps = new Float64Array(ts.length - 1);
  for (let i = 1; i < ts.length; i++) gaps[i - 1] = ts[i]! - ts[i - 1]!;
  return gaps.sort()[gaps.length >> 1]!;
}

/** The frames of `stack`, innermost first (empty for the root or an unresolved stack). */
export function framesOf(profile: CpuStackTable, stack: number): number[] {
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
  /** Samples with the frame anywhere on their stack (once per sample, however deep it recurs). */
  totalSamples: number;
}

/**
 * Self and total time per frame of `thread`'s samples in [fromNs, toNs) (all of them by default), the
 * largest self time first. A recursive frame counts once per sample in its total. In a range, a sample
 * counts for the part of its time (coveredNs) inside the range, and among `samples` if any of it is.
 */
export function functionTimes(profile: CpuProfile, threads: Iterable<ThreadSamples> = profile.threads.values(), fromNs = -Infinity, toNs = Infinity): { functions: FunctionTime[]; sampledNs: number; samples: number } {
  // Sums in typed arrays by frame index (no Map, Set or object per step): a long trace's samples walk millions of frames.
  const n = profile.frames.length;
  const selfNs = new Float64Array(n);
  const totalNs = new Float64Array(n);
  const selfSamples = new Float64Array(n);
  const totalSamples = new Float64Array(n);
  /** The last sample (counted from 1) that added to each frame's total: a recursive frame counts once per sample. */
  const lastSample = new Float64Array(n);
  /** Frames in the order first met (the order among equal times). */
  const met: number[] = [];
  let sampledNs = 0;
  let samples = 0;
  for (const t of threads) {
    const [lo, hi] = samplesCovering(t, fromNs, toNs);
    for (let i = lo; i < hi; i++) {
      const w = coveredNs(t, i, fromNs, toNs);
      sampledNs += w;
      samples++;
      const stack = t.stack[i]!;
      if (stack >= 0) {
        const leaf = profile.stackFrame[stack]!;
        selfNs[leaf]! += w;
        selfSamples[leaf]!++;
      }
      for (let s = stack; s >= 0; s = profile.stackParent[s]!) {
        const frame = profile.stackFrame[s]!;
        if (lastSample[frame] === samples) continue;
        if (lastSample[frame] === 0) met.push(frame);
        lastSample[frame] = samples;
        totalNs[frame]! += w;
        totalSamples[frame]!++;
      }
    }
  }
  const functions: FunctionTime[] = met.map((frame) => ({ frame, selfNs: selfNs[frame]!, totalNs: totalNs[frame]!, selfSamples: selfSamples[frame]!, totalSamples: totalSamples[frame]! }));
  functions.sort((a, b) => b.selfNs - a.selfNs || b.totalNs - a.totalNs);
  return { functions, sampledNs, samples };
}

/** The index range [lo, hi) of `t`'s samples with fromNs <= timestamp < toNs. */
export function sampleRange(t: ThreadSamples, fromNs: number, toNs: number): [number, number] {
  return [lowerBound(t.timestampNs, fromNs), lowerBound(t.timestampNs, toNs)];
}

/**
 * The index range [lo, hi) of `t`'s samples whose time [timestamp, timestamp + weight) overlaps
 * [fromNs, toNs): those within it, and the one before it if that one's time reaches into it.
 */
export function samplesCovering(t: ThreadSamples, fromNs: number, toNs: number): [number, number] {
  let [lo, hi] = sampleRange(t, fromNs, toNs);
  if (toNs <= fromNs) return [lo, lo];
  if (lo > 0 && t.timestampNs[lo - 1]! + t.weightNs[lo - 1]! > fromNs) lo--;
  return [lo, hi];
}

/**
 * The part of sample `i`'s time [timestamp, timestamp + weight) inside [fromNs, toNs): its whole weight
 * inside the range, so that the times of adjacent ranges add up to the time of their union and the
 * time of a range never exceeds its length.
 */
export function coveredNs(t: ThreadSamples, i: number, fromNs: number, toNs: number): number {
  const start = t.timestampNs[i]!;
  const w = t.weightNs[i]!;
  if (start >= fromNs && start + w <= toNs) return w;
  return Math.max(0, Math.min(start + w, toNs) - Math.max(start, fromNs));
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

/** A frame's function name, "(anonymous)" for a function without one (as V8's own tools show it). */
export function frameName(frame: CpuFrame): string {
  return frame.functionName === '' ? '(anonymous)' : frame.functionName;
}

/** "name (file.js:12)" for people; anonymous functions as "(anonymous)". */
export function frameLabel(frame: CpuFrame): string {
  const name = frameName(frame);
  if (frame.url === '') return name;
  const file = frame.url.slice(frame.url.lastIndexOf('/') + 1);
  return frame.line > 0 ? `${name} (${file}:${frame.line})` : `${name} (${file})`;
}

/**
 * Who called `frame` when it was the innermost frame, over `t`'s samples in [fromNs, toNs) (each for
 * the part of its time inside, as functionTimes counts it): self time per calling frame (-1: it was
 * outermost), the largest first.
 */
export function callersOf(profile: CpuProfile, t: ThreadSamples, frame: number, fromNs = -Infinity, toNs = Infinity): { frame: number; selfNs: number }[] {
  const byCaller = new Map<number, number>();
  const [lo, hi] = samplesCovering(t, fromNs, toNs);
  for (let i = lo; i < hi; i++) {
    const s = t.stack[i]!;
    if (s < 0 || profile.stackFrame[s] !== frame) continue;
    const parent = profile.stackParent[s]!;
    const caller = parent < 0 ? -1 : profile.stackFrame[parent]!;
    byCaller.set(caller, (byCaller.get(caller) ?? 0) + coveredNs(t, i, fromNs, toNs));
  }
  return [...byCaller].map(([f, selfNs]) => ({ frame: f, selfNs })).sort((a, b) => b.selfNs - a.selfNs);
}
