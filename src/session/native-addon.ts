import { createRequire } from 'node:module';

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
  try {
    return { addon: createRequire(import.meta.url)(`../../native/gc-hook/build/Release/${target}.node`) as T };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'MODULE_NOT_FOUND') return { missing: 'it was not built at install' };
    // Typically built for another Node.js (NODE_MODULE_VERSION): `npm rebuild tracepipe` fixes it.
    return { missing: `it does not load: ${err.message.split('\n')[0]}` };
  }
}
