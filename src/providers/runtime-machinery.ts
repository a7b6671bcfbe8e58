/**
 * What the built-in providers do when a session enables them (each attaches its callbacks to its
 * definition), and what the API's spans need once they write: loaded with the session machinery
 * (src/machinery.ts), before any session can enable a provider.
 */
import './gc-provider.js';
import './event-loop/event-loop-provider.js';
import './gc-heap-provider.js';
import './cpu-sampler/cpu-sampler-provider.js';
import './process-provider.js';
import './channels-provider.js';
import './counters/runtime-counters-provider.js';
import './heap-snapshot/heap-snapshot-provider.js';
// Spans read a promise's outcome with the native addon, when it was built (a span writes only while a session runs).
import './promise-state.js';
