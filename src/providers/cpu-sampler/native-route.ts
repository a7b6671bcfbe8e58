import { loadNativeAddon } from '../../session/native-addon.js';
import { runtimeCpuSampler } from '../definitions/cpu-sampler.js';
import { SampleWriter, StackTable } from './sample-writer.js';

/** What a take() of the native sampler gives (native/gc-hook/cpu_sampler.cc). */
export interface NativeTake {
  /** µs of CLOCK_MONOTONIC, V8's own sample times. */
  readonly times: Float64Array;
  readonly stacks: Uint32Array;
  /** Frames defined since the caller's `knownFrames`: [name, url, line, column, ...]. */
  readonly frames: (string | number)[];
  /** Stacks defined since the caller's `knownStacks`: [frame, parent, ...]. */
  readonly stackDefs: Uint32Array;
  readonly lostQueueFull: number;
  readonly lostTableFull: number;
  readonly lostRestart: number;
  readonly restarts: string[];
}

export interface NativeSampler {
  /** Samples this thread (threadId) every intervalUs from now on. */
  start(threadId: number, intervalUs: number): void;
  /** Ends this thread's sampling; its last samples wait for take(). */
  stop(): void;
  /** Rotates this thread's profiles now (`force`) or if the rotation thread's interrupt has not lately. */
  rotate(force?: boolean): void;
  /** From any thread: what `threadId` has queued; undefined if it never sampled. */
  take(threadId: number, knownFrames: number, knownStacks: number): NativeTake | undefined;
  /**
   * The threads whose oldest queued sample has waited longer than `ms`, or that stopped sampling
   * with samples left (a worker terminated while it never yielded).
   */
  waiting(ms: number): number[];
  /** Makes this thread's profiler now, logging code as it is created (TRACEPIPE_CPU_READY=1 at start-up). */
  prepare(): void;
  /** Tests only: the next n rotations find no sample, as a stuck profiler's would. */
  forgetSamples(n: number): void;
  /** Tests only: the process-wide stack table holds at most n stacks from now on. */
  limitStacks(n: number): void;
}

const loaded = loadNativeAddon<NativeSampler>('cpu_sampler');
export const nativeSampler: NativeSampler | undefined = loaded.addon;
/** Why the native sampler is missing though the addon was not turned off (TRACEPIPE_GC_HOOK=0). */
export const nativeSamplerMissing: string | undefined = loaded.missing;

/**
 * A thread writes its own samples when its loop turns. Those of a thread that has not for this long
 * (a worker that never yields, or was terminated while it did not) the main thread writes, or its
 * watchdog while the main loop is blocked too.
 */
export const WAITING_MS = 300;

/** Takes what the native sampler queued for a thread and writes it from this thread. */
export class NativeSamples {
  readonly writer = new SampleWriter(new StackTable());

  constructor(private readonly sampler: NativeSampler) {}

  writeFor(thread: number): void {
    const table = this.writer.table;
    const t = this.sampler.take(thread, table.frames, table.stacks);
    if (!t) return;
    table.appendFrames(t.frames);
    table.appendStacks(t.stackDefs);
    this.writer.write(thread, t.times, t.stacks);
    for (const reason of t.restarts) runtimeCpuSampler.SamplerRestarted.write(thread, reason);
    if (t.lostQueueFull > 0) runtimeCpuSampler.SamplesLost.write(t.lostQueueFull, thread, 'queue-full');
    if (t.lostTableFull > 0) runtimeCpuSampler.SamplesLost.write(t.lostTableFull, thread, 'stack-table-full');
    if (t.lostRestart > 0) runtimeCpuSampler.SamplesLost.write(t.lostRestart, thread, 'profiler-restart');
  }

  /** Writes the samples of every thread that has waited longer than `ms` for its own loop (or ended). */
  writeWaiting(ms = WAITING_MS): void {
    for (const thread of this.sampler.waiting(ms)) this.writeFor(thread);
  }
}
