import { callTree } from '../../analysis/call-tree.js';
import { type CpuProfile, frameLabel, functionTimes } from '../../analysis/cpu-profile.js';
import type { CpuFlameData, CpuFlameThread } from './report-page-data.js';

/**
 * Call-tree nodes sent per thread at most, those with the most total time. A deeply recursive program
 * has many more call paths than samples (tsc checking this repository: 89,000 from 13,700 samples),
 * most of them one sample thin, narrower than a pixel until zoomed into; this many keep the page
 * near 1.5 MB and a redraw near 0.1 s.
 */
export const MAX_FLAME_NODES = 50_000;

/** The flame graph's data: each sampled thread's call tree (callTree) and function times (functionTimes). */
export function cpuFlameData(profile: CpuProfile): CpuFlameData {
  const functionOf = new Map<number, number>();
  const functions: string[] = [];
  const urls: string[] = [];
  const fn = (frame: number): number => {
    let i = functionOf.get(frame);
    if (i === undefined) {
      const f = profile.frames[frame]!;
      functionOf.set(frame, (i = functions.length));
      functions.push(frameLabel(f));
      urls.push(f.url);
    }
    return i;
  };
  const threads = [...profile.threads.values()].sort((a, b) => a.thread - b.thread).map((t): CpuFlameThread => {
    const tree = callTree(profile, t);
    // The nodes with the most total time; a parent has at least its child's, and comes first among equals (smaller index), so the kept nodes form a tree.
    const sampled: number[] = [];
    for (let s = 0; s < tree.totalSamples.length; s++) if (tree.totalSamples[s]! > 0) sampled.push(s);
    sampled.sort((a, b) => tree.totalNs[b]! - tree.totalNs[a]! || a - b);
    const kept = sampled.slice(0, MAX_FLAME_NODES);
    const omitted = sampled.slice(MAX_FLAME_NODES);
    const children = new Map<number, number[]>();
    for (const s of kept) {
      const parent = profile.stackParent[s]!;
      const list = children.get(parent);
      if (list) list.push(s);
      else children.set(parent, [s]);
    }
    for (const list of children.values()) list.sort((a, b) => tree.totalNs[b]! - tree.totalNs[a]! || a - b);
    const nodes = { function: [] as number[], parent: [] as number[], selfMs: [] as number[], totalMs: [] as number[], selfSamples: [] as number[], totalSamples: [] as number[] };
    // Depth first, without recursion (call stacks can be thousands deep).
    const todo: Array<[stack: number, parent: number]> = (children.get(-1) ?? []).map((s) => [s, -1]).reverse() as Array<[number, number]>;
    while (todo.length > 0) {
      const [s, parent] = todo.pop()!;
      const index = nodes.function.length;
      nodes.function.push(fn(profile.stackFrame[s]!));
      nodes.parent.push(parent);
      nodes.selfMs.push(tree.selfNs[s]! / 1e6);
      nodes.totalMs.push(tree.totalNs[s]! / 1e6);
      nodes.selfSamples.push(tree.selfSamples[s]!);
      nodes.totalSamples.push(tree.totalSamples[s]!);
      const below = children.get(s);
      if (below) for (let i = below.length - 1; i >= 0; i--) todo.push([below[i]!, index]);
    }
    const times = functionTimes(profile, [t]).functions.filter((f) => functionOf.has(f.frame));
    return {
      thread: t.thread,
      samples: tree.samples,
      sampledMs: tree.sampledNs / 1e6,
      noStackMs: tree.noStackNs / 1e6,
      noStackSamples: tree.noStackSamples,
      nodes,
      functions: { function: times.map((f) => functionOf.get(f.frame)!), selfMs: times.map((f) => f.selfNs / 1e6), totalMs: times.map((f) => f.totalNs / 1e6) },
      omittedNodes: omitted.length,
      omittedMs: omitted.reduce((n, s) => n + tree.selfNs[s]!, 0) / 1e6,
    };
  });
  return { functions, urls, threads };
}
