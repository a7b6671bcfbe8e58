import { threadOriginNs } from '../../buffers/clock.js';
import { runtimeCpuSampler } from '../definitions/cpu-sampler.js';
import { samplerSessionChanges } from './cpu-sampler-provider.js';

/**
 * Frames and stacks by id (1-based): the native tables mirrored (ids are process-wide), or interned
 * here for the inspector route (ids of this thread's own).
 */
export class StackTable {
  readonly frameName: string[] = [];
  readonly frameUrl: string[] = [];
  readonly frameLine: number[] = [];
  readonly frameColumn: number[] = [];
  readonly stackFrame: number[] = [];
  readonly stackParent: number[] = [];
  private readonly frameIds = new Map<string, number>();
  private readonly stackIds = new Map<string, number>();

  get frames(): number {
    return this.frameName.length;
  }

  get stacks(): number {
    return this.stackFrame.length;
  }

  /** Appends frames given as [name, url, line, column, ...] (the native table's new ones). */
  appendFrames(flat: readonly (string | number)[]): void {
    for (let i = 0; i + 3 < flat.length; i += 4) this.pushFrame(flat[i] as string, flat[i + 1] as string, flat[i + 2] as number, flat[i + 3] as number);
  }

  /** Appends stacks given as [frame, parent, ...]. */
  appendStacks(flat: Uint32Array): void {
    for (let i = 0; i + 1 < flat.length; i += 2) {
      this.stackFrame.push(flat[i]!);
      this.stackParent.push(flat[i + 1]!);
    }
  }

  /** The id of a frame, added when new. */
  internFrame(name: string, url: string, line: number, column: number): number {
    const key = `${name}\0${url}\0${line}:${column}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      id = this.pushFrame(name, url, line, column);
      this.frameIds.set(key, id);
    }
    return id;
  }

  /** The id of `frame` called from stack `parent` (0: outermost), added when new. */
  internStack(frame: number, parent: number): number {
    const key = `${frame}:${parent}`;
    let id = this.stackIds.get(key);
    if (id === undefined) {
      this.stackFrame.push(frame);
      this.stackParent.push(parent);
      id = this.stackFrame.length;
      this.stackIds.set(key, id);
    }
    return id;
  }

  private pushFrame(name: string, url: string, line: number, column: number): number {
    this.frameName.push(name);
    this.frameUrl.push(url);
    this.frameLine.push(line);
    this.frameColumn.push(column);
    return this.frameName.length;
  }
}

/**
 * Written again after this long, as Perfetto's producers clear their interned state: a flight
 * recorder's ring drops its oldest chunks, definitions among them (docs/FORMAT.md, "CPU samples").
 */
const REDEFINE_MS = 5000;

/**
 * Writes samples of any thread as Runtime.CpuSampler events from this thread, each frame and stack
 * defined before the first sample that uses it (docs/FORMAT.md, "CPU samples").
 */
export class SampleWriter {
  /**
   * When (ms) each frame and stack was defined: readers go by time, and a batch of another thread's
   * samples may be older than what this writer wrote last, so a definition counts only for samples
   * at or after its time; an older sample gets it again.
   */
  private readonly frameAt = new Map<number, number>();
  private readonly stackAt = new Map<number, number>();
  private writtenSinceMs = performance.now();
  /** samplerSessionChanges() when this writer last defined everything again (-1: never). */
  private seenSessionChanges = -1;
  /** CLOCK_MONOTONIC µs of this thread's performance.now() origin. */
  private readonly originUs = Number(threadOriginNs()) / 1000;
  private readonly pending: number[] = [];

  constructor(readonly table: StackTable) {}

  /** The next samples will define everything again. */
  private forgetDefinitions(): void {
    this.frameAt.clear();
    this.stackAt.clear();
    this.writtenSinceMs = performance.now();
  }

  /** `times` are µs of CLOCK_MONOTONIC (V8's sample times), `stacks` ids in the table. */
  write(thread: number, times: ArrayLike<number>, stacks: ArrayLike<number>): void {
    if (!runtimeCpuSampler.Sample.enabled) return;
    // After the set of sessions changed (a new one has seen no definition), on every writing thread.
    const changes = samplerSessionChanges();
    if (changes !== this.seenSessionChanges || performance.now() - this.writtenSinceMs >= REDEFINE_MS) {
      this.seenSessionChanges = changes;
      this.forgetDefinitions();
    }
    for (let i = 0; i < times.length; i++) {
      const atMs = (times[i]! - this.originUs) / 1000;
      const stack = stacks[i]!;
      if (stack !== 0 && !((this.stackAt.get(stack) ?? Infinity) <= atMs)) this.define(stack, atMs);
      runtimeCpuSampler.Sample.writeAt(atMs, stack, thread);
    }
  }

  /** Defines `stack` and the parents not yet defined, outermost first, at `atMs`. */
  private define(stack: number, atMs: number): void {
    const t = this.table;
    const chain = this.pending;
    chain.length = 0;
    for (let s = stack; s !== 0 && !((this.stackAt.get(s) ?? Infinity) <= atMs); s = t.stackParent[s - 1]!) chain.push(s);
    for (let i = chain.length - 1; i >= 0; i--) {
      const s = chain[i]!;
      const frame = t.stackFrame[s - 1]!;
      if (!((this.frameAt.get(frame) ?? Infinity) <= atMs)) {
        runtimeCpuSampler.Frame.writeAt(atMs, frame, t.frameName[frame - 1]!, t.frameUrl[frame - 1]!, t.frameLine[frame - 1]!, t.frameColumn[frame - 1]!);
        this.frameAt.set(frame, atMs);
      }
      runtimeCpuSampler.Stack.writeAt(atMs, s, frame, t.stackParent[s - 1]!);
      this.stackAt.set(s, atMs);
    }
  }
}
