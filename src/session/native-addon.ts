import { requireBuiltin } from '../schema/this-thread.js';
const { existsSync } = requireBuiltin('node:fs') as typeof import('node:fs');
const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');

/** What loading one of tracepipe's native addons gave: the addon, or why it is missing. */
export interface LoadedAddon<T> {
  readonly addon?: T;
  /** Why the addon is not in use though it was not turned off (TRACEPIPE_GC_HOOK=0). */
  readonly missing?: string;
}

/**
 * Loads a target of native/gc-hook/binding.gyp (the GC hook, the heap snapshot stream, the loop metrics), built at
 * install where a compiler is available. TRACEPIPE_GC_HOOK=0 turns all of them off: each then has its
 * JavaScript fallback (docs/PROVIDERS.md).
 */
export function loadNativeAddon<T>(target: string): LoadedAddon<T> {
  // Turned off on purpose (also how tests run the fallbacks): nothing is missing.
  if (process.env.TRACEPIPE_GC_HOOK === '0') return {};
  let loaded = opened.get(target);
  if (!loaded) opened.set(target, (loaded = open(target)));
  return loaded as LoadedAddon<T>;
}

/** This thread's addons, each opened once (an addon's init runs per open). */
const opened = new Map<string, LoadedAddon<unknown>>();

/**
 * Through process.dlopen rather than require(): the file's path is known, and require()'s lookup
 * (normalising, the package scope, realpath) is path work added to the modules' own, which during a
 * session's start is enough for V8 to optimise Node's path functions (BENCHMARKS.md §38).
 */
function open(target: string): LoadedAddon<unknown> {
  const file = fileURLToPath(new URL(`../../native/gc-hook/build/Release/${target}.node`, import.meta.url));
  const module = { exports: {} };
  try {
    process.dlopen(module, file);
    return { addon: module.exports };
  } catch (e) {
    if (!existsSync(file)) return { missing: 'it was not built at install' };
    // Typically built for another Node.js (NODE_MODULE_VERSION): `npm rebuild tracepipe` fixes it.
    return { missing: `it does not load: ${(e as Error).message.split('\n')[0]}` };
  }
}
