import { requireBuiltin, runScriptBundlesWith, threadId } from './schema/this-thread.js';
import { loadNativeAddon } from './session/native-addon.js';

/**
 * What became of a bundle's code cache when this thread ran it: used; rejected (damaged, or made by
 * another Node or under other V8 flags: the body compiled from source, as it does without one); or
 * missing (not made, or the addon that checks it is not built or is off).
 */
export type CodeCacheUse = 'used' | 'rejected' | 'missing';

const runs: { readonly bundle: string; readonly cache: CodeCacheUse }[] = [];

/** The bundles this thread has run as scripts, in order, and what became of each one's code cache. */
export function bundleScriptRuns(): readonly { readonly bundle: string; readonly cache: CodeCacheUse }[] {
  return runs;
}

/** Set by the build and the install: each script's code cache is written as the process exits (scripts/code-cache.mjs). */
const WRITE_CACHE_ENV = 'TRACEPIPE_WRITE_CODE_CACHE';

/**
 * A cache file is this mark, the checksum of V8's bytes and that of the body it was made from (u32s,
 * little-endian), then V8's bytes. V8 checks that a cache is its own version's and flags' and that the
 * body's length matches, but not, in release builds, that its bytes are whole (a damaged cache aborted
 * the process as V8 read it), nor what the body says (a body edited to the same length ran the cache's
 * old code, or V8 parsed the functions it compiled later at the wrong places). The checksums are the
 * native addon's (native/gc-hook/code_cache.cc); without the addon no cache is read or written.
 */
const CACHE_MARK = 0x32434354; // "TCC2"
const CACHE_HEADER_BYTES = 12;
/** Far beyond any bundle's (~100 KB): a file past it is not read. */
const MAX_CACHE_BYTES = 32 << 20;

type Checksum = (bytes: Uint8Array) => number;

/** The addon's checksum, or undefined where the addon is off (TRACEPIPE_GC_HOOK=0) or was not built. */
function codeCacheChecksum(): Checksum | undefined {
  return loadNativeAddon<{ checksum: Checksum }>('code_cache').addon?.checksum;
}

/** V8's bytes of a cache file, or undefined when the file is not whole or was made from another body. */
function cacheBytes(file: Buffer, bodySum: number, sum: Checksum): Buffer | undefined {
  if (file.length <= CACHE_HEADER_BYTES || file.readUInt32LE(0) !== CACHE_MARK || file.readUInt32LE(8) !== bodySum) return undefined;
  const bytes = file.subarray(CACHE_HEADER_BYTES);
  return sum(bytes) === file.readUInt32LE(4) ? bytes : undefined;
}

type Body = (imports: readonly object[], bundleUrl: string) => Record<string, unknown>;

/**
 * The last line of a body, before its source map's: what it imports (specifiers relative to its
 * bundle) and its code cache's file, as the build wrote them (scripts/bundle-main-thread.mjs).
 */
const MANIFEST_MARK = '\n//# tracepipe.bundle=';

/**
 * Each bundle this thread has begun to run, by its URL, as Node's loader keeps a module: running (its
 * imports or its body), ran (its exports), or failed (what its body threw, thrown again to whoever
 * asks later: a body runs once, whichever way it is reached).
 */
type BundleState = { readonly state: 'running' } | { readonly state: 'ran'; readonly exports: Record<string, unknown> } | { readonly state: 'failed'; readonly error: unknown };
const bundles = new Map<string, BundleState>();
const RUNNING: BundleState = { state: 'running' };

/** A bundle's exports once it ran; what it threw if it failed; an error if it is running (a body that asked for itself). */
function settled(bundleUrl: string, known: BundleState): Record<string, unknown> {
  if (known.state === 'ran') return known.exports;
  if (known.state === 'failed') throw known.error;
  throw new Error(`tracepipe: ${bundleUrl} was asked for while it runs`);
}

/** The bundle this module is part of (register-own), which the build names here as it runs: bodies import it. */
let ownBundle: { readonly url: string; readonly namespace: object } | undefined;

/** Called by the bundle this module is part of as it runs, with its exports (an object of them) and its URL: the build adds the call. */
export function ownBundleIs(namespace: object, url: string): void {
  ownBundle = { url, namespace };
}

/**
 * Runs the body of the bundle at `bundleUrl` (the file `body` beside it), compiled by node:vm with
 * V8's code cache `cache` (beside it too), and returns its exports. The bundles a session loads are
 * ~270 KB of JavaScript, and compiling it, eagerly and then function by function as it first runs,
 * was a fifth of what a startup session cost (BENCHMARKS.md §40); Node 20 has no code cache for ES
 * modules. The cache is made by the build after a startup session and an API session have run, so
 * it holds every function they compiled. The bundle's own file is an ES module that imports what the
 * body imports and passes their namespaces in, in `imports`, so modules load in the order they did.
 * A bundle that requireNow() has run already is not run again: its exports are the same.
 */
export function runBundleScript(bundleUrl: string, body: URL, cache: URL, imports: readonly object[]): Record<string, unknown> {
  const known = bundles.get(bundleUrl);
  if (known) return settled(bundleUrl, known);
  const { readFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  return run(bundleUrl, readFileSync(fileURLToPath(body)), fileURLToPath(cache), imports);
}

/**
 * The exports of the script bundle at `href`, run now with what it imports (in their order, as its
 * ES module would have run them), for requireNow: without its ES module's file, nor those of what it
 * imports. Node's loader cost ~1 ms a file, and a startup session went through six of them and its
 * first require() of an ES module (BENCHMARKS.md §42). Undefined when `href` is not one (no body
 * beside it, or no manifest that reads as one: a build without bundles, a body edited by hand); it
 * throws what the body (or one it imports) threw, or that it is running already.
 */
function scriptBundle(href: string): object | undefined {
  if (href === ownBundle?.url) return ownBundle.namespace;
  const known = bundles.get(href);
  if (known) return settled(href, known);
  const { readFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  if (!href.endsWith('.js')) return undefined;
  let source: Buffer;
  try {
    source = readFileSync(fileURLToPath(`${href.slice(0, -3)}.script.cjs`));
  } catch {
    return undefined;
  }
  const text = source.toString('utf8');
  const manifest = manifestOf(text);
  if (!manifest) return undefined;
  const { imports, cache } = manifest;
  bundles.set(href, RUNNING);
  let namespaces: object[] | undefined = [];
  try {
    for (const spec of imports) {
      const imported = scriptBundle(new URL(spec, href).href);
      if (imported === undefined) namespaces = undefined;
      else namespaces?.push(imported);
    }
  } finally {
    // Its imports' failures are theirs: through its ES module, it fails with the first of them.
    bundles.delete(href);
  }
  return namespaces && run(href, source, fileURLToPath(new URL(cache, href)), namespaces, text);
}

/** A body's manifest line, or undefined where it has none that reads as one (a body edited by hand). */
function manifestOf(text: string): { imports: string[]; cache: string } | undefined {
  const at = text.lastIndexOf(MANIFEST_MARK);
  if (at < 0) return undefined;
  const end = text.indexOf('\n', at + 1);
  try {
    const m = JSON.parse(text.slice(at + MANIFEST_MARK.length, end < 0 ? undefined : end)) as { imports?: unknown; cache?: unknown };
    // Files beside it or below its folder's parent, as the build names them; nothing else is read.
    const relative = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string' && /^\.\.?\/[\w./-]+\.js$/.test(x));
    return relative(m.imports) && typeof m.cache === 'string' && /^[\w.-]+\.cache$/.test(m.cache) ? { imports: m.imports, cache: m.cache } : undefined;
  } catch {
    return undefined;
  }
}

/** Compiles and runs a body, once: what it returned, or what it threw, is what every later ask gets. */
function run(bundleUrl: string, source: Buffer, cachePath: string, imports: readonly object[], text?: string): Record<string, unknown> {
  bundles.set(bundleUrl, RUNNING);
  try {
    const exports = compile(bundleUrl, source, cachePath, text)(imports, bundleUrl);
    bundles.set(bundleUrl, { state: 'ran', exports });
    return exports;
  } catch (error) {
    bundles.set(bundleUrl, { state: 'failed', error });
    throw error;
  }
}

/** `text`: the source decoded already (requireNow read its manifest from it). */
function compile(bundleUrl: string, source: Buffer, cachePath: string, text = source.toString('utf8')): Body {
  const { readFileSync, renameSync, statSync, writeFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
  const { Script } = requireBuiltin('node:vm') as typeof import('node:vm');
  const sum = codeCacheChecksum();
  const bodySum = sum?.(source) ?? 0;
  let file: Buffer | undefined;
  try {
    if (sum) file = statSync(cachePath).size > MAX_CACHE_BYTES ? Buffer.alloc(0) : readFileSync(cachePath);
  } catch {
    // Not made (a build that could not run tracepipe): compiled from source.
  }
  const cachedData = file && sum ? cacheBytes(file, bodySum, sum) : undefined;
  // Named by the bundle's own URL, as the module was: stack traces name it as before.
  const script = new Script(text, { filename: bundleUrl, ...(cachedData ? { cachedData } : {}) });
  runs.push({ bundle: bundleUrl, cache: file === undefined ? 'missing' : cachedData === undefined || script.cachedDataRejected === true ? 'rejected' : 'used' });
  if (sum && process.env[WRITE_CACHE_ENV] === '1') {
    process.once('exit', () => {
      const bytes = script.createCachedData();
      const header = Buffer.alloc(CACHE_HEADER_BYTES);
      header.writeUInt32LE(CACHE_MARK, 0);
      header.writeUInt32LE(sum(bytes), 4);
      header.writeUInt32LE(bodySum, 8);
      // Whole or not at all, for a process (or another of this one's threads) reading or writing it meanwhile.
      const temp = `${cachePath}.${process.pid}.${threadId()}`;
      writeFileSync(temp, Buffer.concat([header, bytes]));
      renameSync(temp, cachePath);
    });
  }
  return script.runInThisContext() as Body;
}

runScriptBundlesWith(scriptBundle);
