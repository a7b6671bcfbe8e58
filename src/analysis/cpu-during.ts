import { type CpuProfile, type FunctionTime, functionTimes } from './cpu-profile.js';

/**
 * What one thread ran during an interval, from its CPU samples: the answer to "what was the CPU doing
 * during that stall / that slow request". The times partition the interval exactly:
 * sampledNs + unsampledNs = toNs - fromNs, and the functions' self times plus noStackNs = sampledNs.
 */
export interface IntervalCpu {
  readonly thread: number;
  readonly fromNs: number;
  readonly toNs: number;
  /** False when the trace holds no sample of the thread at all (the sampler was off for it): nothing can be said. */
  readonly threadSampled: boolean;
  /** Samples whose time overlaps the interval. */
  readonly samples: number;
  /** The part of the interval the thread's samples stand for (each sample: until the next one, within MAX_WEIGHT_INTERVALS). */
  readonly sampledNs: number;
  /** The part no sample stands for: the thread was not sampled then (descheduled, or sampling stopped or restarted). */
  readonly unsampledNs: number;
  /** Sampled time in no function: a stack the trace never defined (counted, not guessed), or a sample V8 gave no frame for. */
  readonly noStackNs: number;
  /** The innermost frame of each sample (self time), the largest first. */
  readonly functions: readonly FunctionTime[];
}

/**
 * Attributes `thread`'s CPU samples to [fromNs, toNs) (ns on the trace clock): the functions on CPU
 * during it by self time, each sample counted for the part of its time inside the interval
 * (functionTimes with a range, so these figures agree with every other view of the profile).
 * Stalls are the main thread's (the stall's `thread`); a span's is the thread that began it.
 */
export function cpuDuring(profile: CpuProfile, thread: number, fromNs: number, toNs: number): IntervalCpu {
  const t = profile.threads.get(thread);
  const lengthNs = Math.max(0, toNs - fromNs);
  if (!t) return { thread, fromNs, toNs, threadSampled: false, samples: 0, sampledNs: 0, unsampledNs: lengthNs, noStackNs: 0, functions: [] };
  const { functions, sampledNs, samples } = functionTimes(profile, [t], fromNs, toNs);
  const selfNs = functions.reduce((n, f) => n + f.selfNs, 0);
  return {
    thread,
    fromNs,
    toNs,
    threadSampled: true,
    samples,
    sampledNs,
    unsampledNs: Math.max(0, lengthNs - sampledNs),
    noStackNs: Math.max(0, sampledNs - selfNs),
    functions: functions.filter((f) => f.selfSamples > 0),
  };
}
