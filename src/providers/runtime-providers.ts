/**
 * The built-in providers' definitions, made by `import 'tracepipe'` (and by the session machinery
 * when the diagnostics server loads it first), so that a session naming them just works. What each
 * does when enabled (the module its definition names) loads when a session first enables it.
 */
export { runtimeGC } from './definitions/gc.js';
export { runtimeEventLoop } from './definitions/event-loop.js';
export { runtimeGCHeap } from './definitions/gc-heap.js';
export { runtimeCpuSampler } from './definitions/cpu-sampler.js';
export { runtimeProcess } from './definitions/process.js';
export { nodeChannels } from './definitions/channels.js';
export { runtimeCounters } from './definitions/runtime-counters.js';
export { runtimeHeapSnapshot } from './definitions/heap-snapshot.js';
