// Build step after tsc: each of tracepipe's own service threads (a session's drain, the main thread's
// stall watchdog) gets its entry as one file, replacing tsc's output in place. A new thread pays
// Node's ES module loader per file (resolve, stat, read, compile): one file instead of ~40 halves
// the time from `new Worker` to a running drain. Each worker is an isolate of its own, so the bundle
// shares no module state with the main thread's modules, which stay one file each (tests and
// tools import them by path).
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const ENTRIES = ['workers/drain-worker.js', 'workers/event-loop-watchdog.js'];

/**
 * Every module keeps the import.meta.url it had as a file of its own: the URLs it builds relative to
 * itself (the native addon, package.json, another worker's entry, a provider's machinery) name the
 * same files from inside the bundle.
 */
const ownModuleUrl = (outfile) => ({
  name: 'own-module-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      const contents = await readFile(path, 'utf8');
      const fromBundle = relative(dirname(outfile), path);
      return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'js' };
    });
  },
});

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
    plugins: [ownModuleUrl(outfile)],
  });
}
