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
import { readlinkSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';

const SERVER_DELAY_MS = 100;
/** Set by src/register.ts (any copy's) as it starts what is asked for. */
const IMPORTED = Symbol.for('tracepipe.register.started');

const env = process.env;
// As src/register.ts reads them.
const asked = [
  !['', '0', undefined].includes(env.TRACEPIPE_ENABLE) && 'TRACEPIPE_ENABLE',
  !['', '0', undefined].includes(env.TRACEPIPE_FLIGHT_RECORDER?.trim()) && 'TRACEPIPE_FLIGHT_RECORDER',
  env.TRACEPIPE_CPU_READY === '1' && 'TRACEPIPE_CPU_READY',
].filter((v): v is string => typeof v === 'string');

/** Whether this is the main thread, without loading node:worker_threads there (as src/schema/this-thread.ts asks). */
function onMainThread(): boolean {
  try {
    return readlinkSync('/proc/thread-self') === `${process.pid}/task/${process.pid}`;
  } catch {
    return require('node:worker_threads').isMainThread;
  }
}

/** NODE_OPTIONS as Node splits it: at spaces, but not within double quotes, where a backslash escapes the next character. */
function nodeOptions(): string[] {
  const args: string[] = [];
  let quoted = false;
  let fresh = true;
  const text = env.NODE_OPTIONS ?? '';
  for (let i = 0; i < text.length; i++) {
    let c = text[i];
    if (c === '\\' && quoted && i + 1 < text.length) c = text[++i];
    else if (c === ' ' && !quoted) {
      fresh = true;
      continue;
    } else if (c === '"') {
      quoted = !quoted;
      continue;
    }
    if (fresh) args.push(c);
    else args[args.length - 1] += c;
    fresh = false;
  }
  return args;
}

/** What Node was told to --import, on its command line and in NODE_OPTIONS. */
function imports(): string[] {
  return [process.execArgv, nodeOptions()].flatMap((args) =>
    args.flatMap((arg, i) => (arg.startsWith('--import=') ? [arg.slice('--import='.length)] : arg === '--import' && i + 1 < args.length ? [args[i + 1]] : [])),
  );
}

/** Whether `spec` (an --import's) names this copy's src/register.ts. */
function namesOurRegister(spec: string): boolean {
  if (spec === 'tracepipe/register') return true;
  try {
    // node:url only here: a worker thread has not loaded it.
    const fromUrl = (url: string): string => (require('node:url') as typeof import('node:url')).fileURLToPath(url);
    const path = spec.startsWith('file:') ? fromUrl(spec) : /^[./]/.test(spec) ? resolve(spec) : undefined;
    return path !== undefined && realpathSync(path) === realpathSync(join(__dirname, 'register.js'));
  } catch {
    // A URL or path that names no file: Node says why as it imports it.
    return false;
  }
}

const failed = (what: string) => (e: unknown) => void process.stderr.write(`tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`);
const refuse = (): void =>
  failed('nothing started')(`${asked.join(', ')} need${asked.length > 1 ? '' : 's'} --import tracepipe/register: under --require the application would run before ${asked.length > 1 ? 'they' : 'it'} started`);
const main = onMainThread();
const imported = asked.length && main ? imports() : [];
// Asked for, with no --import that may start it: said now. With an --import that is not this copy's
// register (another copy's, or a module that imports it), what it starts before the application has
// set IMPORTED by the time the server's timer fires, or it is said then.
const askedLater = asked.length > 0 && main && imported.length > 0 && !imported.some(namesOurRegister);
if (asked.length && main && imported.length === 0) refuse();
setTimeout(() => {
  if (askedLater && !(globalThis as Record<symbol, unknown>)[IMPORTED]) refuse();
  if (main) void import('./register-start.js').then((r) => r.startServer()).catch(failed('diagnostics server not started'));
}, SERVER_DELAY_MS).unref();
