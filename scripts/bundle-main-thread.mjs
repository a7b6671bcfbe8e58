// Build step after tsc and the workers' bundles: what `import 'tracepipe'` loads becomes one file,
// dist/bundles/public-api.js, and each module of it a one-line file that re-exports its part. Node's
// ES module loader costs ~1 ms a file on this machine (resolve, stat, read, compile, link), and the
// import read 48 files: one file is ~2.5× faster (BENCHMARKS.md §30.2). A module keeps its path and
// its exports: tests, tools and the modules loaded on first use import it by path and get the one
// instance in the bundle, never a second copy with its own state (a second provider registry).
// Dynamic imports stay dynamic: what loads on first use (src/machinery.ts) still loads on first use,
// file by file; bundling the session machinery the same way measured no faster (§30.2).
import { build } from 'esbuild';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleUrl } from './module-url-plugin.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DIST = `${REPO}dist/`;
const ROOT = 'index.js';
const BUNDLE = 'bundles/public-api.js';
const SHIM_MARK = `// tracepipe: this module is part of ${BUNDLE}\n`;
/**
 * What `tracepipe/register` loads without a session asked for (itself, then the diagnostics server,
 * the thread's host and what answers a client's requests), and what it loads first when one is (the
 * GC hook, which holds the collections the loading causes for the session): those stay files of
 * their own, so an attachable process that never traces loads none of the public API, and no
 * collection the bundle's loading causes comes before the hook.
 */
const REGISTER_ROOTS = ['register.js', 'ipc/diagnostics-server.js', 'schema/provider-host.js', 'ipc/diagnostics-requests.js', 'providers/gc-hook.js'];
/**
 * What the entry runs once the bundle has run: a worker thread that imports tracepipe while a session
 * runs joins it at once, loading the session machinery with require(), which Node refuses while a
 * module it needs (the bundle) is still evaluating.
 */
const RUNS_AFTER = new Set([DIST + 'api/worker-join.js']);

const importPath = (fromFile, toFile) => {
  const r = relative(dirname(fromFile), toFile);
  return r.startsWith('.') ? r : `./${r}`;
};

/** The modules `roots` load, statically, and the modules loaded on first use that they name. */
async function staticGraph(roots) {
  const dynamicImportsApart = {
    name: 'dynamic-imports-apart',
    setup(b) {
      b.onResolve({ filter: /^[./]/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined));
    },
  };
  const { metafile } = await build({ ...esm, entryPoints: roots.map((r) => DIST + r), bundle: true, write: false, metafile: true, outdir: DIST, plugins: [dynamicImportsApart] });
  return new Set(Object.keys(metafile.inputs).map(inRepo));
}

/** esbuild's options for every build here; its metafile names files relative to the repository. */
const esm = { platform: 'node', format: 'esm', logLevel: 'warning', absWorkingDir: REPO };
const inRepo = (f) => resolve(REPO, f);
const APART = await staticGraph(REGISTER_ROOTS);

/** Where the bundle stops: Node's builtins, register's modules and every dynamic import stay imports of the files they name. */
const bundleBoundary = (outfile, outside = RUNS_AFTER) => ({
  name: 'bundle-boundary',
  setup(b) {
    b.onResolve({ filter: /^[./]/ }, (args) => {
      const file = resolve(args.resolveDir, args.path);
      if (args.kind === 'dynamic-import' || APART.has(file) || outside.has(file)) return { path: importPath(outfile, file), external: true };
      return undefined;
    });
  },
});

const outfile = DIST + BUNDLE;

const { metafile } = await build({ ...esm, entryPoints: [DIST + ROOT], bundle: true, write: false, metafile: true, outfile, plugins: [bundleBoundary(outfile, new Set())] });
// The entry itself is not a member: it re-exports the public API from the bundle, then runs RUNS_AFTER,
// whose imports are members.
const members = Object.keys(metafile.inputs)
  .map(inRepo)
  .filter((f) => f !== DIST + ROOT && !RUNS_AFTER.has(f));
const entryImports = metafile.inputs[relative(REPO, DIST + ROOT)].imports.map((i) => inRepo(i.path)).filter((f) => members.includes(f));

/** Each member's exports, under names unique in the bundle. */
const parts = [];
for (const [index, file] of members.entries()) {
  if ((await readFile(file, 'utf8')).startsWith(SHIM_MARK)) throw new Error(`${file} is already part of ${BUNDLE}: run tsc before this script`);
  const { metafile: own } = await build({ ...esm, entryPoints: [file], bundle: false, write: false, metafile: true, outdir: DIST });
  const names = Object.values(own.outputs).flatMap((o) => o.exports ?? []);
  parts.push({ file, names: names.map((name) => ({ name, inBundle: `m${index}$${name}` })) });
}

// The entry's imports first, in its order, so that the modules run in the order they ran as files.
let entry = entryImports.map((f) => `import ${JSON.stringify(f)};\n`).join('');
for (const { file, names } of parts) if (names.length) entry += `export { ${names.map((n) => `${n.name} as ${n.inBundle}`).join(', ')} } from ${JSON.stringify(file)};\n`;
await build({
  ...esm,
  stdin: { contents: entry, resolveDir: DIST, sourcefile: `${BUNDLE} (entry)`, loader: 'js' },
  outfile,
  bundle: true,
  target: 'node20',
  sourcemap: true,
  // Class and function names as in the source: stack traces and errors name ProviderImpl, not _ProviderImpl.
  keepNames: true,
  plugins: [bundleBoundary(outfile), ownModuleUrl(outfile)],
});

/** A member as imported from `fromFile`: its part of the bundle. */
function partOf({ file, names }, fromFile) {
  const from = JSON.stringify(importPath(fromFile, outfile));
  return names.length ? `export { ${names.map((n) => `${n.inBundle} as ${n.name}`).join(', ')} } from ${from};\n` : `import ${from};\n`;
}
const partByFile = new Map(parts.map((p) => [p.file, p]));

/**
 * The other modules (those loaded on first use, the CLI's, export.js) import the members they name
 * from the bundle itself: through the members' own files, each would be one more file to load
 * (+11 ms on a session's start, measured). Everything else they import stays as it was.
 */
const importsFromBundle = (file) => ({
  name: 'imports-from-bundle',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.namespace === 'member') return { path: args.path, external: true };
      if (args.kind === 'entry-point') return undefined;
      const target = /^[./]/.test(args.path) ? resolve(args.resolveDir, args.path) : undefined;
      if (target && args.kind !== 'dynamic-import' && partByFile.has(target)) return { path: relative(REPO, target), namespace: 'member' };
      return { path: args.path, external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'member' }, ({ path }) => ({ contents: partOf(partByFile.get(inRepo(path)), file), loader: 'js' }));
  },
});

const WORKER_BUNDLES = new Set(['workers/drain-worker.js', 'workers/event-loop-watchdog.js'].map((m) => DIST + m));
const others = (await readdir(DIST, { recursive: true }))
  .filter((f) => f.endsWith('.js'))
  .map((f) => DIST + f)
  .filter((f) => !partByFile.has(f) && !APART.has(f) && !WORKER_BUNDLES.has(f) && f !== outfile);
for (const file of others) {
  const source = await readFile(file, 'utf8');
  // Only those that import a member statically are rewritten.
  if (!parts.some((p) => source.includes(`/${basename(p.file)}'`) || source.includes(`/${basename(p.file)}"`))) continue;
  await build({ ...esm, entryPoints: [file], outfile: file, allowOverwrite: true, bundle: true, target: 'node20', sourcemap: true, keepNames: true, plugins: [importsFromBundle(file)] });
}

// Only now, with every file read as tsc wrote it: each member becomes its part of the bundle.
for (const part of parts) {
  await writeFile(part.file, SHIM_MARK + partOf(part, part.file));
  await rm(`${part.file}.map`, { force: true });
}
