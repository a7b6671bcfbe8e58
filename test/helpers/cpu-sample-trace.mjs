// Traces of CPU samples written without a session, in exactly the layout of docs/FORMAT.md ("CPU
// samples"): frames and stacks interned per writing thread, defined before the first sample that
// uses them, so a test knows every sample's stack and time in advance.
import { writeTrace } from './trace-builder.mjs';

const PROVIDER = 'Runtime.CpuSampler';
const type = (id, name, fields) => ({ provider: PROVIDER, name, id, version: 0, level: 4, keywords: 0n, fields });

export const SAMPLER = {
  Frame: type(1, 'Frame', [['frameId', 'u32'], ['functionName', 'string'], ['url', 'string'], ['line', 'u32'], ['column', 'u32']]),
  Stack: type(2, 'Stack', [['stackId', 'u32'], ['frameId', 'u32'], ['parentId', 'u32']]),
  Sample: type(3, 'Sample', [['stackId', 'u32'], ['thread', 'u32']]),
  SamplerStarted: type(4, 'SamplerStarted', [['thread', 'u32'], ['intervalUs', 'u32'], ['route', 'string']]),
  SamplerStopped: type(5, 'SamplerStopped', [['thread', 'u32']]),
  SamplesLost: type(6, 'SamplesLost', [['count', 'u32'], ['thread', 'u32'], ['reason', 'string']]),
  SamplerRestarted: type(7, 'SamplerRestarted', [['thread', 'u32'], ['reason', 'string']]),
};

/** The rundown's thread description (Runtime.Process/Thread), which names threads in every view. */
export const THREAD_INFO = { provider: 'Runtime.Process', name: 'Thread', id: 2, version: 0, level: 4, keywords: 0n, fields: [['session', 'u32'], ['phase', 'string'], ['threadId', 'u32'], ['name', 'string'], ['role', 'string']] };

/**
 * Builds the events of a trace in order: each writer (a stream thread id) numbers its own frames and
 * stacks, as the sampler does, and defines them on first use, with the sample's timestamp.
 */
export class CpuSampleScript {
  events = [];
  #seq = new Map();
  #writers = new Map();

  #emit(type, threadId, timestampNs, values) {
    const sequence = this.#seq.get(threadId) ?? 0;
    this.#seq.set(threadId, sequence + 1);
    this.events.push({ type, threadId, sequence, timestampNs, values });
  }

  #writer(threadId) {
    let w = this.#writers.get(threadId);
    if (!w) this.#writers.set(threadId, (w = { frames: new Map(), stacks: new Map() }));
    return w;
  }

  /** `frames`: the stack, the outermost first, each `[functionName, url, line, column]`. */
  sample(writer, thread, timestampNs, frames) {
    const w = this.#writer(writer);
    let parent = 0;
    for (const f of frames) {
      const fkey = f.join('\0');
      let frameId = w.frames.get(fkey);
      if (frameId === undefined) {
        frameId = w.frames.size + 1;
        w.frames.set(fkey, frameId);
        this.#emit(SAMPLER.Frame, writer, timestampNs, [frameId, ...f]);
      }
      const skey = `${frameId}:${parent}`;
      let stackId = w.stacks.get(skey);
      if (stackId === undefined) {
        stackId = w.stacks.size + 1;
        w.stacks.set(skey, stackId);
        this.#emit(SAMPLER.Stack, writer, timestampNs, [stackId, frameId, parent]);
      }
      parent = stackId;
    }
    this.#emit(SAMPLER.Sample, writer, timestampNs, [parent, thread]);
  }

  /** A sample of no frame at all (stack 0: V8 gave only its root). */
  noFrame(writer, thread, timestampNs) {
    this.#emit(SAMPLER.Sample, writer, timestampNs, [0, thread]);
  }

  /** A sample whose stack id the writer never defined (its definition lost with a ring's oldest chunks). */
  unresolved(writer, thread, timestampNs) {
    this.#emit(SAMPLER.Sample, writer, timestampNs, [999_999, thread]);
  }

  started(writer, thread, timestampNs, intervalUs) {
    this.#emit(SAMPLER.SamplerStarted, writer, timestampNs, [thread, intervalUs, 'test']);
  }

  lost(writer, thread, timestampNs, count, reason) {
    this.#emit(SAMPLER.SamplesLost, writer, timestampNs, [count, thread, reason]);
  }

  threadInfo(timestampNs, threadId, name, role) {
    this.#emit(THREAD_INFO, 0, timestampNs, [1, 'start', threadId, name, role]);
  }

  write(file, extraTypes = []) {
    return writeTrace(file, [...Object.values(SAMPLER), THREAD_INFO, ...extraTypes], this.events);
  }
}

const MAIN_JS = 'file:///app/main.js';
const WORKER_JS = 'file:///app/worker.js';
export const FRAMES = {
  main: ['main', MAIN_JS, 1, 1],
  hot: ['hot', MAIN_JS, 10, 3],
  helper: ['helper', MAIN_JS, 20, 5],
  anonymous: ['', MAIN_JS, 30, 12],
  gc: ['(garbage collector)', '', 0, 0],
  program: ['(program)', '', 0, 0],
  work: ['work', WORKER_JS, 5, 7],
  parse: ['parse', WORKER_JS, 40, 2],
};

/**
 * Two sampled threads: main (0), whose samples its own thread writes and, during a stall, its
 * watchdog (thread 2) with ids of its own, and a worker "pool" (1). Main spends most of its time in
 * `hot`; one main sample's stack was never defined, another has no frame; the worker has a gap longer than four intervals.
 * Samples are 1 ms apart (the worker's 2 ms) at 1 ms intervals.
 */
export function twoThreadScript() {
  const s = new CpuSampleScript();
  const { main, hot, helper, anonymous, gc, program, work, parse } = FRAMES;
  s.threadInfo(1_000, 0, 'main', 'main');
  s.threadInfo(1_000, 1, 'pool', 'worker');
  s.threadInfo(1_000, 2, '', 'tracepipe-watchdog');
  s.started(0, 0, 2_000, 1000);
  s.started(1, 1, 2_000, 1000);
  const mainStacks = [[main, hot], [main, hot], [main, hot, helper], [main, anonymous], [gc], [main, hot], [program]];
  const ms = (i) => 1_000_000 * (i + 1);
  for (let i = 0; i < 40; i++) {
    // Samples 20–29 are the watchdog's, written below.
    if (i < 20 || i >= 30) s.sample(0, 0, ms(i), mainStacks[i % mainStacks.length]);
    if (i === 33) s.unresolved(0, 0, ms(i) + 500_000);
    if (i === 36) s.noFrame(0, 0, ms(i) + 500_000);
    if (i % 2 === 0 && (i < 10 || i > 16)) s.sample(1, 1, ms(i) + 250_000, i % 4 === 0 ? [work, parse] : [work]);
  }
  s.lost(0, 0, ms(40), 3, 'buffer-full');
  // The loop was blocked for samples 20–29, so the watchdog wrote them, and the drain took its chunk
  // last: main's samples are not in time order in the stream.
  for (let i = 20; i < 30; i++) s.sample(2, 0, ms(i), mainStacks[i % mainStacks.length]);
  return s;
}
