import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Runtime.CpuSampler`: V8's CPU profiler sampling each thread that loaded tracepipe, every
 * `IntervalUs` µs (default 1000), as `Sample` events at their true time on the trace clock.
 *
 * Stacks are interned (docs/FORMAT.md, "CPU samples"): a `Frame` names a function once, a `Stack` is
 * a frame on top of a parent stack, and both are written before the first `Sample` that uses them, at
 * that sample's timestamp and by the same writing thread. Ids are scoped by the thread that wrote the
 * event (its `threadId` in the stream), not by the sampled `thread`; a writer writes its definitions
 * again after the set of sessions changes and every few seconds, so a ring (flight recorder) that
 * dropped the first ones still resolves what it holds.
 */
export const runtimeCpuSampler = defineBuiltinProvider('Runtime.CpuSampler', {
  events: {
    Frame: {
      id: 1,
      level: Level.Informational,
      fields: [['frameId', 'u32'], ['functionName', 'string'], ['url', 'string'], ['line', 'u32'], ['column', 'u32']],
      doc: "A function as V8's profiler names it: its name ('' for an anonymous function; V8's own entries are '(program)', '(garbage collector)', '(idle)', '(root)'), the script's URL ('' when none), and the 1-based line and column where the function starts (0 when unknown). Defined once per writing thread before the first Stack that uses it.",
    },
    Stack: {
      id: 2,
      level: Level.Informational,
      fields: [['stackId', 'u32'], ['frameId', 'u32'], ['parentId', 'u32']],
      doc: 'A call stack: frame `frameId` called from stack `parentId` (0: the frame is the outermost). Defined once per writing thread before the first Sample that uses it.',
    },
    Sample: {
      id: 3,
      level: Level.Informational,
      fields: [['stackId', 'u32'], ['thread', 'u32']],
      doc: "One CPU sample of `thread` (its threadId: 0 is the main thread) at the event's timestamp, which is V8's own time of the sample: the thread was running the stack's innermost frame, called from the rest of the stack.",
    },
    SamplerStarted: {
      id: 4,
      level: Level.Informational,
      fields: [['thread', 'u32'], ['intervalUs', 'u32'], ['route', 'string']],
      doc: "Sampling of `thread` began (or its interval changed) at the event's time, every `intervalUs`; route is 'native' (the addon: samples keep coming while the thread never yields) or 'inspector' (the fallback: written when the thread's loop turns).",
    },
    SamplerStopped: {
      id: 5,
      level: Level.Informational,
      fields: [['thread', 'u32']],
      doc: 'Sampling of `thread` ended at the event\'s time: every sample up to it has been written (or counted in SamplesLost).',
    },
    SamplesLost: {
      id: 6,
      level: Level.Warning,
      fields: [['count', 'u32'], ['thread', 'u32'], ['reason', 'string']],
      doc: "Samples of `thread` that never became Sample events: reason 'queue-full' (nothing took them while the thread's loop stayed blocked and no watchdog ran), 'stack-table-full' (more distinct stacks than the table holds), 'profiler-restart' (the samples of a stuck profiler that was replaced).",
    },
    SamplerRestarted: {
      id: 7,
      level: Level.Warning,
      fields: [['thread', 'u32'], ['reason', 'string']],
      doc: "V8's profiler for `thread` returned no samples while the thread used CPU, so tracepipe replaced it; reason says what was seen.",
    },
  },
}, () => new URL('../cpu-sampler/cpu-sampler-provider.js', import.meta.url).href);
