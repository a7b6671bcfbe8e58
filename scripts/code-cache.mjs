// Writes the code caches of the bundles that run as scripts (src/bundle-script.ts) for the Node
// that runs this: it runs what a startup session and a session started from the API run, in `dist`,
// and each script's cache is written as that process exits, holding every function it compiled. The
// build runs it (scripts/bundle-main-thread.mjs), and so does the package's install, for the Node that
// installs it: V8 takes a cache made by its own version under the same flags only, and compiles from
// source otherwise.
//   node scripts/code-cache.mjs [dist directory]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function writeCodeCaches(dist) {
  const work = mkdtempSync(join(tmpdir(), 'tracepipe-code-cache-'));
  try {
    const api = `const tp = await import(${JSON.stringify(pathToFileURL(join(dist, 'index.js')).href)});
      const p = tp.defineProvider('Build.CodeCache', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });
      const s = await tp.startSession({ providers: 'Runtime.GC,Build.CodeCache', output: ${JSON.stringify(join(work, 'api.tptrace'))} });
      for (let i = 0; i < 300; i++) p.Mark.write(i);
      await s.stop();`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
    execFileSync(process.execPath, ['--import', pathToFileURL(join(dist, 'register.js')).href, '--input-type=module', '-e', api], {
      env: { ...env, TRACEPIPE_WRITE_CODE_CACHE: '1', TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(work, 'startup.tptrace') },
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 60_000,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = resolve(process.argv[2] ?? fileURLToPath(new URL('../dist', import.meta.url)));
  // At a clone's install, before its build: the build writes them.
  if (!existsSync(join(dist, 'register.js'))) process.exit(0);
  try {
    writeCodeCaches(dist);
  } catch (e) {
    // Tracing works without them, compiling from source.
    process.stderr.write(`tracepipe: code caches not written (${e.message.split('\n')[0]}); tracepipe compiles its bundles from source instead\n`);
  }
}
