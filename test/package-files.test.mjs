// What `npm pack` ships is what a user needs: the compiled code, its types, the docs' text, the native
// addon's sources. No screenshots, and no source maps (they point at src/, which is not shipped).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const run = promisify(execFile);

async function packed(...args) {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', ...args], { cwd: ROOT, timeout: 120_000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout)[0].files.map((f) => f.path);
}

for (const [name, args] of [['tracepipe', []], ['@tracepipe/analyze', ['--workspace', '@tracepipe/analyze']]]) {
  test(`npm pack ${name}: no screenshots, no source maps, the code and its types`, { timeout: 150_000 }, async () => {
    const files = await packed(...args);
    assert.deepEqual(files.filter((f) => /\.(png|jpe?g|gif|map)$/.test(f)), []);
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), files.slice(0, 20).join(', '));
    assert.ok(files.includes('README.md'));
  });
}
