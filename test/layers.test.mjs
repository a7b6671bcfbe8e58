// README's Layout: each layer of src/ imports only its own and the layers before it. Checked for the
// layers up to the sinks, which the drain thread loads, so that nothing there pulls in the
// converters, the CLI or the analysis (the OTLP sink once imported its model from src/export).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const LAYERS = ['schema', 'format', 'otlp', 'buffers', 'session', 'drain', 'sinks'];

test('src/schema … src/sinks import only their own layer or the layers before it', async () => {
  const wrong = [];
  for (const [rank, layer] of LAYERS.entries()) {
    for (const entry of await readdir(join(SRC, layer), { recursive: true })) {
      if (!entry.endsWith('.ts')) continue;
      const file = join(SRC, layer, entry);
      for (const [, spec] of (await readFile(file, 'utf8')).matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = relative(SRC, normalize(join(dirname(file), spec))).split('/')[0];
        const at = LAYERS.indexOf(target);
        if (at < 0 || at > rank) wrong.push(`${layer}/${entry} imports ${spec}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
