import { importTracked, requireNow } from './this-thread.js';

/**
 * Loads the ES module at `url` (a file: URL): synchronously where it can (requireNow), so that what it
 * sets up exists when this returns, and returns undefined; elsewhere with import(), and the promise
 * settles once it has loaded.
 */
export function loadModule(url: string): Promise<unknown> | undefined {
  return requireNow(url) === undefined ? importTracked(url) : undefined;
}
