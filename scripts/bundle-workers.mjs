// Build step after tsc: each of tracepipe's own service threads (a session's drain, the main thread's
// stall watchdog) gets its entry as one file, replacing tsc's output in place. A new thread pays
// Node's ES module loader per file (resolve, stat, read, compile): one file instead of ~40 halves
// the time from `new Worker` to a running drain. Each worker is an isolate of its own, so the bundle
// shares no module state with the main thread's modules (whose own bundles, made next by
// scripts/bundle-main-thread.mjs from tsc's files, keep every module importable by its path).
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleUrl } from './module-url-plugin.mjs';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const ENTRIES = ['workers/drain-worker.js', 'workers/event-loop-watchdog.js'];

const THIS_THREAD = fileURLToPath(new URL('../dist/schema/this-thread.js', import.meta.url));

/**
 * Node's builtins reached through the process (requireBuiltin, src/schema/this-thread.ts) instead of
 * imported as ES modules: an ES module import reads every export, and the lazy ones of node:fs and
 * node:zlib load fs's streams and more (in a new thread, 35 of Node's modules and ~6 ms instead of 16
 * and ~1 ms). Each builtin becomes a CommonJS module of the bundle, whose named imports esbuild reads
 * as properties where they are used. node:module stays an import: requireBuiltin needs it where the
 * process has no getBuiltinModule (Node before 20.16), and it has no lazy exports.
 */
const builtinsThroughProcess = {
  name: 'builtins-through-process',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, ({ path }) => (path === 'node:module' ? { path, external: true } : { path, namespace: 'builtin', sideEffects: false }));
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, ({ path }) => ({
      contents: `module.exports = require(${JSON.stringify(THIS_THREAD)}).requireBuiltin(${JSON.stringify(path)});`,
      loader: 'js',
      resolveDir: dirname(THIS_THREAD),
    }));
  },
};

for (const entry of ENTRIES) {
  const outfile = DIST + entry;
  const input = await readFile(outfile, 'utf8');
  await build({
    stdin: { contents: input, resolveDir: dirname(outfile), sourcefile: entry, loader: 'js' },
    outfile,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    // Class and function names as in the source: stack traces and errors name SessionMemory, not _SessionMemory.
    keepNames: true,
    logLevel: 'warning',
    plugins: [builtinsThroughProcess, ownModuleUrl(outfile)],
  });
}
