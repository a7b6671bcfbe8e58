/**
 * What the default profile's providers do when enabled (session/trace-profiles.ts), one module: nearly
 * every session enables one of them, and the first to load brings the others, whose callbacks wait
 * until a session enables their provider (ProviderImpl.holdCallbacks). As four bundles and the one
 * they share, they were 9 of a startup session's files; as part of the session machinery's bundle,
 * they put their code before a session's first event. Loaded as the session's drain starts, they
 * are one file (BENCHMARKS.md §39).
 */
import './gc-provider.js';
import './gc-heap-provider.js';
import './event-loop/event-loop-provider.js';
import './process-provider.js';
