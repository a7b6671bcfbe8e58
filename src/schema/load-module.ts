import { canRequireModules, requireBuiltin, trackImport } from './this-thread.js';

/**
 * Loads the ES module at `url` (a file: URL): synchronously where it can (canRequireModules), so that
 * what it sets up exists when this returns, and returns undefined; elsewhere with import(), and the
 * promise settles once it has loaded.
 */
export function loadModule(url: string): Promise<unknown> | undefined {
  if (!canRequireModules()) return trackImport(import(url));
  // Not imports of node:module and node:url, which would load with `import 'tracepipe'`. One require()
  // for every module (each is named by its whole path): making one is path work of its own.
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  ownRequire ??= (requireBuiltin('node:module') as typeof import('node:module')).createRequire(import.meta.url);
  try {
    ownRequire(fileURLToPath(url));
  } catch {
    // Node 20's require() refuses a module that an import() of the application's under way has
    // reached but not yet evaluated: import() then, which says what any other failure was.
    return trackImport(import(url));
  }
  return undefined;
}

let ownRequire: NodeJS.Require | undefined;
