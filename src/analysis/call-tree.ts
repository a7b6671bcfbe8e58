import { type CpuProfile, coveredNs, samplesCovering, type ThreadSamples } from './cpu-profile.js';

/**
 * A thread's samples as a call tree (what a flame graph draws). Its nodes are the profile's stacks:
 * a stack is a frame called from a parent stack, so each stack is one path from the outermost frame,
 * and `stackParent` is the tree. Arrays are indexed by stack; a stack's parent has a smaller index
 * (the profile defines a parent before its children).
 */
export interface CallTree {
  readonly thread: number;
  /** Time and samples whose innermost stack is this one. */
  readonly selfNs: Float64Array;
  readonly selfSamples: Float64Array;
  /** Time and samples of this stack and every stack called from it. */
  readonly totalNs: Float64Array;
  readonly totalSamples: Float64Array;
  /** All the samples taken into account, and their time (as functionTimes counts them). */
  readonly samples: number;
  readonly sampledNs: number;
  /** Of those, the samples in no node: their stack is not in the trace, or V8 gave no frame for them. */
  readonly noStackSamples: number;
  readonly noStackNs: number;
}

/** The call tree of `t`'s samples in [fromNs, toNs) (all by default), each sample counted for its time inside the range. */
export function callTree(profile: CpuProfile, t: ThreadSamples, fromNs = -Infinity, toNs = Infinity): CallTree {
  const n = profile.stackFrame.length;
  const selfNs = new Float64Array(n);
  const selfSamples = new Float64Array(n);
  let samples = 0;
  let sampledNs = 0;
  let noStackSamples = 0;
  let noStackNs = 0;
  const [lo, hi] = samplesCovering(t, fromNs, toNs);
  for (let i = lo; i < hi; i++) {
    const w = coveredNs(t, i, fromNs, toNs);
    const stack = t.stack[i]!;
    samples++;
    sampledNs += w;
    if (stack < 0) {
      noStackSamples++;
      noStackNs += w;
      continue;
    }
    selfNs[stack]! += w;
    selfSamples[stack]!++;
  }
  const totalNs = selfNs.slice();
  const totalSamples = selfSamples.slice();
  // Children have larger indexes than their parent: one pass from the end adds each into its parent.
  for (let s = n - 1; s >= 0; s--) {
    const parent = profile.stackParent[s]!;
    if (parent < 0) continue;
    totalNs[parent]! += totalNs[s]!;
    totalSamples[parent]! += totalSamples[s]!;
  }
  return { thread: t.thread, selfNs, selfSamples, totalNs, totalSamples, samples, sampledNs, noStackSamples, noStackNs };
}
