/**
 * `node --require tracepipe/register app.js` (or in NODE_OPTIONS): makes the process attachable, as
 * --import tracepipe/register does, without starting Node's ES module loader, which any --import
 * starts first (on Node 20 it reads with the thread pool and loads ~25 of Node's modules, several ms
 * of `node -e 0`: BENCHMARKS.md §43). The diagnostics server starts once the process has run 100 ms,
 * as src/register.ts says why; this file is all that loads before that.
 *
 * A startup session, a flight recorder and TRACEPIPE_CPU_READY need --import: they start before the
 * application runs because Node waits for an imported module's top-level await, which --require
 * cannot make it do. Under --require alone they are refused in one line on stderr and the
 * application runs untraced, rather than have its first events and collections silently missing.
 */
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_DELAY_MS = 100;

const env = process.env;
// As src/register.ts reads them.
const asked = [
  !['', '0', undefined].includes(env.TRACEPIPE_ENABLE) && 'TRACEPIPE_ENABLE',
  !['', '0', undefined].includes(env.TRACEPIPE_FLIGHT_RECORDER?.trim()) && 'TRACEPIPE_FLIGHT_RECORDER',
  env.TRACEPIPE_CPU_READY === '1' && 'TRACEPIPE_CPU_READY',
].filter((v): v is string => typeof v === 'string');

/** A path as the file it names (its links followed), or undefined if it names none. */
function realFile(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Whether Node was told to --import tracepipe/register as well, on its command line or in
 * NODE_OPTIONS (`tracepipe collect` adds it there): that import starts what is asked for.
 */
function registerImported(): boolean {
  const own = realFile(join(__dirname, 'register.js'));
  const lists = [process.execArgv, (env.NODE_OPTIONS ?? '').split(/\s+/).map((a) => a.replace(/^(["'])(.*)\1$/, '$2'))];
  return lists.some((args) =>
    args.some((arg, i) => {
      const spec = arg.startsWith('--import=') ? arg.slice('--import='.length) : arg === '--import' ? args[i + 1] : undefined;
      if (spec === undefined) return false;
      if (spec === 'tracepipe/register') return true;
      const path = spec.startsWith('file:') ? fileURLToPath(spec) : /^[./]/.test(spec) ? resolve(spec) : undefined;
      return path !== undefined && realFile(path) === own;
    }),
  );
}

const failed = (what: string) => (e: unknown) => void process.stderr.write(`tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`);
if (asked.length && !registerImported() && require('node:worker_threads').isMainThread) {
  failed('nothing started')(`${asked.join(', ')} needs --import tracepipe/register: under --require the application would run before it started`);
}
setTimeout(() => void import('./register-start.js').then((r) => r.startServer()).catch(failed('diagnostics server not started')), SERVER_DELAY_MS).unref();
