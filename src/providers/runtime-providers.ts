/**
 * The built-in providers, defined by `import 'tracepipe'` (and by the session machinery when the
 * diagnostics server loads it first), so that a session naming them just works.
 */
export { runtimeGC } from './gc-provider.js';
export { runtimeEventLoop } from './event-loop/event-loop-provider.js';
export { runtimeGCHeap } from './gc-heap-provider.js';
export { runtimeCpuSampler } from './cpu-sampler/cpu-sampler-provider.js';
export { runtimeProcess } from './process-provider.js';
export { nodeChannels } from './channels-provider.js';
export { runtimeCounters } from './counters/runtime-counters-provider.js';
export { runtimeHeapSnapshot } from './heap-snapshot/heap-snapshot-provider.js';
