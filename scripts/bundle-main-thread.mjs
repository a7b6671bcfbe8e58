// Build step after tsc and the workers' bundles: what `import 'tracepipe'` loads becomes three
// bundles, what loads on first use a few more, and each module of them a one-line file that
// re-exports its part. Node's ES module loader costs ~1 ms a file on this machine (resolve, stat,
// read, compile, link), and the import read 48 files: ~2× faster as bundles (BENCHMARKS.md §30.2). A
// module keeps its path and its exports: tests, tools and the modules loaded on first use import it
// by path and get the one instance in its bundle, never a second copy with its own state (a second
// provider registry). What loads on first use (src/machinery.ts, a provider's machinery) still loads
// on first use: a bundle of its own is evaluated only when one of its modules is first imported.
//
// - dist/bundles/register-own.js: what `tracepipe/register` does once asked (src/register-start.ts),
//   which thread this is, the seam to what loads on first use; the public import and the tools
//   import it as well.
// - dist/bundles/register-shared.js: what `tracepipe/register`'s diagnostics server and GC hook share
//   with the public API (the thread's host, record layouts, errors, the GC tally): small modules,
//   which register loads without the public API.
// - dist/bundles/session-base.js: what register's diagnostics server and GC hook share with the
//   session machinery (the session memory, the exit flush, the native addons' loader).
// - dist/providers/gc-hook.js: the GC hook and its ring, which register loads first when a session
//   is asked for.
// - dist/bundles/shared.js: what the public API shares with the tools that read traces and attach
//   (the trace reader, the exporters, the diagnostics client, the convert worker): the schema's
//   types and layouts, errors, levels. Those tools load it and no more, so reading a trace
//   installs no host and defines no provider.
// - dist/bundles/public-api.js: the rest of the import (providers, their definitions, the host, the
//   API's front ends).
// - dist/bundles/session-tools.js: what the sessions share with the tools that read and write traces
//   and, the byte writer, with register's server too (§38).
// - dist/session-machinery.js: the sessions (src/session-machinery.ts) and the startup session.
// - dist/providers/default-profile.js: the default profile's four providers' machinery (§39).
// - dist/providers/**/*-provider.js: each other built-in provider's machinery, and
//   dist/bundles/providers-shared.js what two or more of them share (§38).
//
// A bundle loaded on first use is written at its root's own path (a "home" bundle): what loads it
// reads one file, not a one-line file and then the bundle (Node's loader costs ~1 ms a file, §39).
// Its root's exports keep their names there; its other members are one-line files as elsewhere.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeCodeCaches } from './code-cache.mjs';
import { ownModuleUrl } from './module-url-plugin.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DIST = `${REPO}dist/`;
const BUNDLES = `${DIST}bundles/`;
const ROOT = `${DIST}index.js`;
const SHIM_MARK = '// tracepipe: this module is part of ';
/**
 * What `tracepipe/register` loads without a session asked for (itself, then the diagnostics server,
 * the thread's host and what answers a client's requests), and what it loads first when one is (the
 * GC hook, which holds the collections the loading causes for the session): none of it is in the
 * public API's bundles, so an attachable process that never traces loads none of the public API,
 * and no collection their loading causes comes before the hook. What of it the public API imports
 * too is the register-shared bundle.
 */
const REGISTER_ROOTS = ['register-start.js', 'ipc/diagnostics-server.js', 'schema/provider-host.js', 'ipc/diagnostics-requests.js', 'providers/gc-hook.js'];
/**
 * The session machinery (src/session-machinery.ts), with the startup session: loaded on first use,
 * as one file. Their ~20 modules one by one, with Node's worker machinery, took 2.6× as long to load
 * (BENCHMARKS.md §38), all of it before a session's first event.
 */
const MACHINERY_ROOT = 'session-machinery.js';
/** The tools that read traces or attach, which load the shared bundle only. */
const TOOL_ROOTS = ['export.js', 'format/trace-reader.js', 'ipc/diagnostics-client.js', 'workers/convert-worker.js'];
/**
 * What the entry runs once the bundles have run (it is part of the entry's own file): a worker thread
 * that imports tracepipe while a session runs joins it at once, loading the session machinery with
 * require(), which Node refuses while a module it needs (a bundle) is still evaluating.
 */
const RUNS_AFTER = new Set([`${DIST}api/worker-join.js`]);
/** The service threads' entries, bundles of their own already (scripts/bundle-workers.mjs). */
const WORKER_BUNDLES = new Set(['workers/drain-worker.js', 'workers/event-loop-watchdog.js'].map((m) => DIST + m));

/** esbuild's options for every build here; its metafile names files relative to the repository. */
const esm = { platform: 'node', format: 'esm', logLevel: 'warning', absWorkingDir: REPO };
const inRepo = (f) => resolve(REPO, f);
const importPath = (fromFile, toFile) => {
  const r = relative(dirname(fromFile), toFile);
  return r.startsWith('.') ? r : `./${r}`;
};

const distFiles = async () =>
  (await readdir(DIST, { recursive: true }))
    .filter((f) => f.endsWith('.js'))
    .map((f) => DIST + f)
    .filter((f) => !f.startsWith(BUNDLES) && !WORKER_BUNDLES.has(f));

// Every file is read as tsc wrote it: a file that imports a bundle comes from an earlier run.
for (const file of await distFiles()) {
  if ((await readFile(file, 'utf8')).includes('bundles/')) throw new Error(`${relative(REPO, file)} comes from an earlier run of this script: run tsc first`);
}
await rm(BUNDLES, { recursive: true, force: true });
// The bodies and code caches of an earlier run's script bundles (below).
for (const f of await readdir(DIST, { recursive: true })) if (/\.(script\.cjs|cache)$/.test(f)) await rm(DIST + f);

/** The modules `roots` load statically (the modules they load on first use are not followed). */
async function staticGraph(roots) {
  const dynamicImportsApart = {
    name: 'dynamic-imports-apart',
    setup(b) {
      b.onResolve({ filter: /^[./]/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined));
    },
  };
  const { metafile } = await build({ ...esm, entryPoints: roots.map((r) => DIST + r), bundle: true, write: false, metafile: true, outdir: DIST, plugins: [dynamicImportsApart] });
  return { files: new Set(Object.keys(metafile.inputs).map(inRepo)), metafile };
}

const registers = (await staticGraph(REGISTER_ROOTS)).files;
/** The GC hook and what register loads for it alone: it opens the hook's addon as it runs, which a process with no session asked for never does. */
const GC_HOOK = 'providers/gc-hook.js';
const besideGcHook = (await staticGraph(REGISTER_ROOTS.filter((r) => r !== GC_HOOK))).files;
const gcHookOwn = [...(await staticGraph([GC_HOOK])).files].filter((f) => !besideGcHook.has(f));
// With the loader of the bundles that run as scripts (below), which every one of them imports.
const BUNDLE_SCRIPT = 'bundle-script.js';
/**
 * What register's entry imports (src/register.ts, when something is asked for or its server starts):
 * the entry imports the bundle itself, one file fewer, which exports it under its own names too.
 */
const REGISTER_START = `${DIST}register-start.js`;
const registersOwn = (await staticGraph([relative(DIST, REGISTER_START), BUNDLE_SCRIPT])).files;
const tools = (await staticGraph(TOOL_ROOTS)).files;
const { files: imported, metafile: rootMeta } = await staticGraph([relative(DIST, ROOT)]);
const members = [...imported].filter((f) => f !== ROOT && !RUNS_AFTER.has(f) && !registersOwn.has(f));
const machineryGraph = (await staticGraph([MACHINERY_ROOT])).files;
// What the trace's readers, writers and exporters import stays out of it: they define no provider and
// install no host, which loading the machinery's bundle (and the public API's with it) would.
const toolSide = (await staticGraph([...TOOL_ROOTS, ...(await distFiles()).map((f) => relative(DIST, f)).filter((f) => /^(format|export)\//.test(f))])).files;
const machinery = [...machineryGraph].filter((f) => !imported.has(f) && !registers.has(f) && !toolSide.has(f));
// What the machinery and the default profile's providers share with those tools (byte writing,
// private files, milliseconds), and with register's server as well (the byte writer): one bundle.
const DEFAULT_PROFILE = `${DIST}providers/default-profile.js`;
const defaultProfileGraph = (await staticGraph([relative(DIST, DEFAULT_PROFILE)])).files;
const machineryTools = [...new Set([...machineryGraph, ...defaultProfileGraph])].filter((f) => toolSide.has(f) && !imported.has(f) && !registersOwn.has(f));
const stages = [
  // What register imports once asked (its work, this thread, the first-use seam): the public import reads it first too.
  { bundle: `${BUNDLES}register-own.js`, members: [...registersOwn] },
  { bundle: `${BUNDLES}register-shared.js`, members: members.filter((f) => registers.has(f)) },
  { bundle: `${BUNDLES}session-base.js`, members: [...registers].filter((f) => machineryGraph.has(f) && !imported.has(f) && !registersOwn.has(f) && !toolSide.has(f) && !gcHookOwn.includes(f)) },
  { bundle: DIST + GC_HOOK, members: gcHookOwn.filter((f) => !imported.has(f)), roots: [DIST + GC_HOOK] },
  { bundle: `${BUNDLES}shared.js`, members: members.filter((f) => !registers.has(f) && tools.has(f)) },
  { bundle: `${BUNDLES}public-api.js`, members: members.filter((f) => !registers.has(f) && !tools.has(f)) },
  { bundle: `${BUNDLES}session-tools.js`, members: machineryTools },
  { bundle: DIST + MACHINERY_ROOT, members: machinery, roots: [DIST + MACHINERY_ROOT] },
];

// Each built-in provider's machinery (what a session that enables it loads:
// ProviderImpl.loadMachinery) is a bundle with the modules only it imports, and the modules two or
// more of them import are one more (they only define: the machinery's module alone attaches its
// provider's callbacks). The default profile's four are one (src/providers/default-profile.ts),
// with every module it imports, which the others' import from it. As ~17 files, the default
// profile's resolved enough paths to make V8 optimise Node's path functions during the start: ~10
// ms of compiling and 3.4 MB more of the node binary paged in (BENCHMARKS.md §38); as one, none (§39).
const placed = (f) => imported.has(f) || registers.has(f) || machineryGraph.has(f) || toolSide.has(f);
const defaultGraph = [...defaultProfileGraph].filter((f) => !placed(f));
const taken = (f) => placed(f) || defaultGraph.includes(f);
const providerRoots = (await distFiles()).map((f) => relative(DIST, f)).filter((f) => /^providers\/(.+\/)?[^/]+-provider\.js$/.test(f) && !taken(DIST + f));
const graphs = new Map();
for (const root of providerRoots) graphs.set(DIST + root, [...(await staticGraph([root])).files].filter((f) => !taken(f)));
const users = new Map();
for (const graph of graphs.values()) for (const f of graph) users.set(f, (users.get(f) ?? 0) + 1);
const providersShared = [...users].filter(([f, n]) => n > 1 && !graphs.has(f)).map(([f]) => f);
stages.push({ bundle: DEFAULT_PROFILE, members: defaultGraph, roots: [DEFAULT_PROFILE] });
if (providersShared.length) stages.push({ bundle: `${BUNDLES}providers-shared.js`, members: providersShared });
// A machinery that imports another's comes after it.
const rootsIn = (root) => graphs.get(root).filter((f) => f !== root && graphs.has(f)).length;
for (const root of [...graphs.keys()].sort((a, b) => rootsIn(a) - rootsIn(b))) {
  stages.push({ bundle: root, members: graphs.get(root).filter((f) => f === root || users.get(f) === 1), roots: [root] });
}

/** Each member's stage, and its exports under names unique across the bundles. */
const parts = new Map();
for (const stage of stages) {
  for (const file of stage.members) {
    const { metafile } = await build({ ...esm, entryPoints: [file], bundle: false, write: false, metafile: true, outdir: DIST });
    const names = Object.values(metafile.outputs).flatMap((o) => o.exports ?? []);
    const index = parts.size;
    parts.set(file, { file, stage, names: names.map((name) => ({ name, inBundle: `m${index}$${name}` })) });
  }
}

/** A member as imported from `fromFile`: its part of its bundle. */
function partOf({ stage, names }, fromFile) {
  const from = JSON.stringify(importPath(fromFile, stage.bundle));
  return names.length ? `export { ${names.map((n) => `${n.inBundle} as ${n.name}`).join(', ')} } from ${from};\n` : `import ${from};\n`;
}

/**
 * Resolves the imports of `file` (which is written in its own place, or is a bundle): a member of
 * another bundle (or of any, for `file` outside them) becomes an import of its part; `inline`
 * modules are bundled into it; dynamic imports and anything else not in `ownStage` stay imports of
 * the files they name.
 */
const importsFrom = (file, ownStage, inline = new Set()) => ({
  name: 'imports-from-bundles',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.namespace === 'member') return { path: args.path, external: true };
      if (args.kind === 'entry-point') return undefined;
      const target = /^[./]/.test(args.path) ? resolve(args.resolveDir, args.path) : undefined;
      if (target === REGISTER_START && args.kind === 'dynamic-import') return { path: importPath(file, parts.get(target).stage.bundle), external: true };
      const part = target && args.kind !== 'dynamic-import' ? parts.get(target) : undefined;
      if ((part && part.stage === ownStage) || (target && inline.has(target))) return undefined;
      if (part && ownStage && stages.indexOf(part.stage) > stages.indexOf(ownStage)) throw new Error(`${relative(REPO, target)} is in a later bundle than ${relative(REPO, args.importer)}`);
      if (part) return { path: relative(REPO, target), namespace: 'member' };
      return { path: /^[./]/.test(args.path) ? importPath(file, target) : args.path, external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'member' }, ({ path }) => ({ contents: partOf(parts.get(inRepo(path)), file), loader: 'js' }));
  },
});

/**
 * The script bundles' bodies (below) import register-own: what its loader hands them when it runs
 * them without their ES modules (src/bundle-script.ts) is its exports, as register-own names them.
 * (An import of itself would cost every process that loads register a resolution.)
 */
function ownBundleNamed(stage) {
  const own = stage.members.flatMap((file) => parts.get(file).names.map((n) => ({ file, ...n })));
  const imports = stage.members.map((file) => {
    const names = own.filter((n) => n.file === file).map((n) => `${n.name} as __${n.inBundle}`);
    return names.length ? `import { ${names.join(', ')} } from ${JSON.stringify(file)};\n` : '';
  });
  return `${imports.join('')}import { ownBundleIs as __ownBundleIs } from ${JSON.stringify(DIST + BUNDLE_SCRIPT)};\n__ownBundleIs({ ${own.map((n) => `${n.inBundle}: __${n.inBundle}`).join(', ')} }, import.meta.url);\n`;
}

const rootImports = rootMeta.inputs[relative(REPO, ROOT)].imports.map((i) => inRepo(i.path));
for (const stage of stages) {
  // The entry's imports first, in its order, so that the modules run in the order they ran as files.
  let entry = (stage.roots ?? rootImports)
    .filter((f) => parts.get(f)?.stage === stage)
    .map((f) => `import ${JSON.stringify(f)};\n`)
    .join('');
  for (const file of stage.members) {
    const { names } = parts.get(file);
    // A home bundle's root: its exports under their own names as well, for those who load the bundle as the root.
    const own = file === stage.bundle || file === REGISTER_START ? names.map((n) => n.name) : [];
    if (names.length) entry += `export { ${[...names.map((n) => `${n.name} as ${n.inBundle}`), ...own].join(', ')} } from ${JSON.stringify(file)};\n`;
  }
  await build({
    ...esm,
    stdin: { contents: entry + (stage === stages[0] ? ownBundleNamed(stage) : ''), resolveDir: DIST, sourcefile: `${relative(DIST, stage.bundle)} (entry)`, loader: 'js' },
    outfile: stage.bundle,
    // A home bundle replaces its root's file, which it reads.
    allowOverwrite: true,
    bundle: true,
    target: 'node20',
    sourcemap: true,
    // Class and function names as in the source: stack traces and errors name ProviderImpl, not _ProviderImpl.
    keepNames: true,
    plugins: [importsFrom(stage.bundle, stage), ownModuleUrl(stage.bundle)],
  });
}

// The other modules (the entry, register's server, those loaded on first use, the CLI's, export.js)
// import the members they name from the bundles themselves: through the members' own files, each
// would be one more file to load (+3.9 ms on loading the session machinery, measured). Everything
// else they import stays as it was.
for (const file of await distFiles()) {
  if (parts.has(file)) continue;
  const source = await readFile(file, 'utf8');
  if (![...parts.keys()].some((m) => source.includes(`${importPath(file, m)}'`))) continue;
  const inline = file === ROOT ? RUNS_AFTER : undefined;
  await build({ ...esm, entryPoints: [file], outfile: file, allowOverwrite: true, bundle: true, target: 'node20', sourcemap: true, keepNames: true, plugins: [importsFrom(file, undefined, inline)] });
}

// Only now, with every file read as tsc wrote it: each member becomes its part of its bundle.
for (const part of parts.values()) {
  if (part.file === part.stage.bundle) continue;
  await writeFile(part.file, `${SHIM_MARK}${relative(DIST, part.stage.bundle)}\n${partOf(part, part.file)}`);
  await rm(`${part.file}.map`, { force: true });
}

// The bundles a session loads run as scripts with V8's code cache (src/bundle-script.ts): each
// keeps its path as an ES module that imports what its body imports and passes the namespaces in,
// and exports what the body returns; the body is the bundle as built, its imports taken from those
// namespaces and its exports returned, line for line (its source map still holds). The exports are
// read once the body has run: no module of tracepipe's exports a binding it reassigns, and a bundle
// imports only bundles before it (above), which have run by then.
//
// Each body ends with its manifest: what it imports and its cache's file. requireNow() runs a body
// with the bodies it imports, in the order their modules would have run, without the ES modules'
// files (BENCHMARKS.md §42): so a script bundle imports only script bundles and register-own, whose
// namespace it hands them.
const SCRIPT_BUNDLES = [GC_HOOK, 'bundles/register-shared.js', 'bundles/shared.js', MACHINERY_ROOT, 'bundles/public-api.js', 'providers/default-profile.js', 'bundles/session-base.js', 'bundles/session-tools.js'];
const MANIFEST_MARK = '//# tracepipe.bundle=';
const scriptFiles = new Set([...SCRIPT_BUNDLES.map((rel) => DIST + rel), `${BUNDLES}register-own.js`]);
const IMPORT = /^import (?:(.+) from )?"([^"]+)";$/;
const loader = parts.get(DIST + BUNDLE_SCRIPT);
const runName = loader.names.find((n) => n.name === 'runBundleScript').inBundle;

/** `{ a, b as c }` (an import's or export's clause) as [local, imported or exported] pairs. */
const clause = (text) =>
  text.replace(/^\{|\}$/g, '').split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const [a, b = a] = s.split(/\s+as\s+/);
    return [a, b];
  });

for (const rel of SCRIPT_BUNDLES) {
  const file = DIST + rel;
  const lines = (await readFile(file, 'utf8')).split('\n');
  const specs = [];
  const takes = [];
  for (const [i, line] of lines.entries()) {
    const m = IMPORT.exec(line);
    if (!m) continue;
    lines[i] = '';
    if (!scriptFiles.has(resolve(dirname(file), m[2]))) throw new Error(`${rel}: imports ${m[2]}, neither a script bundle nor register-own`);
    if (!specs.includes(m[2])) specs.push(m[2]);
    const from = `__imports[${specs.indexOf(m[2])}]`;
    if (m[1] === undefined) continue;
    if (m[1].startsWith('* as ')) takes.push(`${m[1].slice(5)} = ${from}`);
    else if (m[1].startsWith('{')) takes.push(`{ ${clause(m[1]).map(([name, local]) => (name === local ? name : `${name}: ${local}`)).join(', ')} } = ${from}`);
    else throw new Error(`${rel}: an import this script does not turn into a script's: ${line}`);
  }
  const start = lines.lastIndexOf('export {');
  const end = lines.indexOf('};', start);
  if (start < 0 || end < 0) throw new Error(`${rel}: no export list at its end`);
  const exports = clause(lines.slice(start + 1, end).join(' '));
  const trailer = lines.slice(end + 1);
  lines.splice(start, lines.length - start, `return { ${exports.map(([local, name]) => `${name}: ${local}`).join(', ')} };`);
  let text = lines.join('\n').replaceAll('import.meta.url', '__bundleUrl');
  for (const [what, pattern] of [['an import or export', /^(import|export)\b/m], ['import.meta', /\bimport\.meta\b(?!`)/], ['an import()', /\bimport\(/]]) {
    if (pattern.test(text)) throw new Error(`${rel}: its body still has ${what}, which a script cannot: ${pattern.exec(text)[0]}`);
  }
  text = `(function (__imports, __bundleUrl) {"use strict";${takes.length ? ` const ${takes.join(', ')};` : ''} ${text}\n})\n`;
  const body = `${basename(rel, '.js')}.script.cjs`;
  const cache = `${basename(rel, '.js')}.${createHash('sha256').update(text).digest('hex').slice(0, 12)}.cache`;
  await writeFile(join(dirname(file), body), `${text}${MANIFEST_MARK}${JSON.stringify({ imports: specs, cache })}\n${trailer.join('\n')}`);
  const fromHere = (target) => JSON.stringify(importPath(file, DIST + target));
  await writeFile(
    file,
    `${specs.map((spec, i) => `import * as i${i} from ${JSON.stringify(spec)};\n`).join('')}` +
      `import { ${runName} as runBundleScript } from ${fromHere('bundles/register-own.js')};\n` +
      // The files named as new URL(literal, import.meta.url): tools that trace what a program reads (a deployment's file tracer) find them.
      `const exports = runBundleScript(import.meta.url, new URL(${JSON.stringify(`./${body}`)}, import.meta.url), new URL(${JSON.stringify(`./${cache}`)}, import.meta.url), [${specs.map((_, i) => `i${i}`).join(', ')}]);\n` +
      `export const { ${exports.map(([, name]) => name).join(', ')} } = exports;\n`,
  );
}

// Their code caches, for the Node that builds (scripts/code-cache.mjs).
writeCodeCaches(DIST);
