import { requireBuiltin } from '../schema/this-thread.js';

let version: string | undefined;

/** The package version, read from package.json next to dist/ when first asked for, not by the import. */
export function tracepipeVersion(): string {
  if (version === undefined) {
    try {
      const { readFileSync } = requireBuiltin('node:fs') as typeof import('node:fs');
      version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      version = '0.0.0';
    }
  }
  return version;
}
