import { readFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';

/**
 * An esbuild plugin for bundles of tracepipe's own modules: every module keeps the import.meta.url
 * it had as a file of its own, so the URLs it builds relative to itself (the native addon,
 * package.json, another worker's entry, a provider's machinery) name the same files from inside the
 * bundle written to `outfile`.
 */
export const ownModuleUrl = (outfile) => ({
  name: 'own-module-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/, namespace: 'file' }, async ({ path }) => {
      const contents = await readFile(path, 'utf8');
      const fromBundle = relative(dirname(outfile), path);
      return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'js' };
    });
  },
});
