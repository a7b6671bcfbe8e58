// Loaded with --import by the instruction bench's baselines: one AsyncLocalStorage made, and nothing
// else, as every tracer (tracepipe, OpenTelemetry) makes one when it loads. On Node 24 that alone takes
// ~7,000 instructions off each request of an untraced http server: until the process has an
// AsyncLocalStorage, every process.nextTick goes through a slow property load in Node's
// async_context_frame (BENCHMARKS.md §6). A tracer's extra is counted over this baseline, not over
// that slow path.
import { AsyncLocalStorage } from 'node:async_hooks';

globalThis[Symbol.for('tracepipe.bench.asyncLocalStorage')] = new AsyncLocalStorage();
