import { requireBuiltin } from './this-thread.js';

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
 * A cache file is this mark, the checksum of V8's bytes (u32, little-endian), then those bytes. V8
 * checks that a cache is its own version's and flags', but not, in release builds, that its bytes are
 * whole: a damaged cache aborts the process as V8 reads it. The checksum is the native addon's
 * (native/gc-hook/code_cache.cc); without the addon no cache is read or written.
 */
const CACHE_MARK = 0x31434354; // "TCC1"
const CACHE_HEADER_BYTES = 8;

type Checksum = (bytes: Uint8Array) => number;
let checksum: Checksum | null | undefined;

/** The addon's checksum, or null where the addon is off (TRACEPIPE_GC_HOOK=0) or was not built. */
function codeCacheChecksum(): Checksum | null {
  if (checksum !== undefined) return checksum;
  checksum = null;
  if (process.env.TRACEPIPE_GC_HOOK === '0') return checksum;
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  const module = { exports: {} as { checksum?: Checksum } };
  try {
    process.dlopen(module, fileURLToPath(new URL('../../native/gc-hook/build/Release/code_cache.node', import.meta.url)));
    checksum = module.exports.checksum ?? null;
  } catch {
    // Not built: the bundles compile from source.
  }
  return checksum;
}

/** V8's bytes of a cache file, or undefined when the file is not whole. */
function cacheBytes(file: Buffer, sum: Checksum): Buffer | undefined {
  if (file.length <= CACHE_HEADER_BYTES || file.readUInt32LE(0) !== CACHE_MARK) return undefined;
  const bytes = file.subarray(CACHE_HEADER_BYTES);
  return sum(bytes) === file.readUInt32LE(4) ? bytes : undefined;
}

type Body = (imports: readonly object[], bundleUrl: string) => Record<string, unknown>;

/**
 * Runs the body of the bundle at `bundleUrl` (the file `body` beside it), compiled by node:vm with
 * V8's code cache `cache` (beside it too), and returns its exports. The bundles a session loads are
 * ~270 KB of JavaScript, and compiling it, eagerly and then function by function as it first runs,
 * was a fifth of what a startup session cost (BENCHMARKS.md §40); Node 20 has no code cache for ES
 * modules. The cache is made by the build after a startup session and an API session have run, so
 * it holds every function they compiled. The bundle's own file is an ES module that imports what the
 * body imports and passes their namespaces in, in `imports`, so modules load in the order they did.
 */
export function runBundleScript(bundleUrl: string, body: string, cache: string, imports: readonly object[]): Record<string, unknown> {
  const { readFileSync, renameSync, writeFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
  const { Script } = requireBuiltin('node:vm') as typeof import('node:vm');
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  const cachePath = fileURLToPath(new URL(cache, bundleUrl));
  const sum = codeCacheChecksum();
  let file: Buffer | undefined;
  try {
    if (sum) file = readFileSync(cachePath);
  } catch {
    // Not made (a build that could not run tracepipe): compiled from source.
  }
  const cachedData = file && sum ? cacheBytes(file, sum) : undefined;
  // Named as the bundle's own file: stack traces and its source map name it as before.
  const script = new Script(readFileSync(fileURLToPath(new URL(body, bundleUrl)), 'utf8'), { filename: fileURLToPath(bundleUrl), ...(cachedData ? { cachedData } : {}) });
  runs.push({ bundle: bundleUrl, cache: file === undefined ? 'missing' : cachedData === undefined || script.cachedDataRejected === true ? 'rejected' : 'used' });
  if (sum && process.env[WRITE_CACHE_ENV] === '1') {
    process.once('exit', () => {
      const bytes = script.createCachedData();
      const header = Buffer.alloc(CACHE_HEADER_BYTES);
      header.writeUInt32LE(CACHE_MARK, 0);
      header.writeUInt32LE(sum(bytes), 4);
      // Whole or not at all, for a process reading it meanwhile.
      writeFileSync(`${cachePath}.${process.pid}`, Buffer.concat([header, bytes]));
      renameSync(`${cachePath}.${process.pid}`, cachePath);
    });
  }
  return (script.runInThisContext() as Body)(imports, bundleUrl);
}
