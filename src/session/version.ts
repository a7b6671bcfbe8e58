import { requireBuiltin } from '../schema/this-thread.js';

/** The package version, read once from package.json next to dist/. */
export const TRACEPIPE_VERSION: string = (() => {
  try {
    const { readFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();
