/**
 * `node --require tracepipe/register app.js` (or in NODE_OPTIONS): makes the process attachable, as
 * --import tracepipe/register does, without starting Node's ES module loader, which any --import
 * starts first (on Node 20 it reads with the thread pool and loads ~25 of Node's modules, several ms
 * of `node -e 0`: BENCHMARKS.md §43). The diagnostics server starts once the process has run 100 ms,
 * as src/register.ts says why; this file is all that loads before that.
 *
 * A startup session, a flight recorder and TRACEPIPE_CPU_READY need --import: they start before the
 * application runs because Node waits for an imported module's top-level await, which --require
 * cannot make it do. This file starts none of them; when nothing else has (an --import of
 * tracepipe/register, or of a module that imports it, sets STARTED before the application runs),
 * it says so in one line on stderr, and the application runs untraced.
 */
import { readlinkSync, writeSync } from 'node:fs';

const SERVER_DELAY_MS = 100;
/** Set by src/register.ts (any copy's) as it starts what is asked for. */
const STARTED = Symbol.for('tracepipe.register.started');

const env = process.env;
// As src/register.ts reads them.
const asked = [
  !['', '0', undefined].includes(env.TRACEPIPE_ENABLE) && 'TRACEPIPE_ENABLE',
  !['', '0', undefined].includes(env.TRACEPIPE_FLIGHT_RECORDER?.trim()) && 'TRACEPIPE_FLIGHT_RECORDER',
  env.TRACEPIPE_CPU_READY === '1' && 'TRACEPIPE_CPU_READY',
].filter((v): v is string => typeof v === 'string');

/**
 * Whether this is the main thread, as src/schema/this-thread.ts asks: /proc where it agrees, without
 * loading node:worker_threads on the main thread; worker_threads where it does not (a PID namespace
 * whose /proc is another's), which a worker thread has loaded already.
 */
function onMainThread(): boolean {
  try {
    if (readlinkSync('/proc/thread-self') === `${process.pid}/task/${process.pid}`) return true;
  } catch {
    // No /proc.
  }
  return (require('node:worker_threads') as typeof import('node:worker_threads')).isMainThread;
}

/** One line on stderr, as src/register-start.ts writes it. */
function say(what: string, e: unknown): void {
  const line = `tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`;
  try {
    writeSync(2, line);
  } catch (error) {
    // A full pipe the application made non-blocking: after its own writes. A closed one loses the
    // line rather than end the application with EPIPE.
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') process.stderr.write(line);
  }
}

const main = onMainThread();
let told = false;
/** Said once, if nothing started what is asked: this file cannot, and no --import of register has. */
function tellIfNotStarted(): void {
  if (told || (globalThis as Record<symbol, unknown>)[STARTED]) return;
  told = true;
  say('nothing started', `${asked.join(', ')} need${asked.length > 1 ? '' : 's'} --import tracepipe/register: --require tracepipe/register cannot start ${asked.length > 1 ? 'them' : 'it'} before the application runs`);
}
// By the process's exit at the latest; and when the server's timer fires if the application (a
// CommonJS one) runs by then, which it does only after every --import has run. Before that, or with
// an ES module application, an --import may still be loading.
if (asked.length && main) process.once('exit', tellIfNotStarted);
setTimeout(() => {
  if (!main) return;
  // Set once Node runs a CommonJS application (deprecated in the documentation only: no warning).
  if (asked.length && process.mainModule) tellIfNotStarted();
  import('./register-start.js').then((r) => r.startServer()).catch((e: unknown) => say('diagnostics server not started', e));
}, SERVER_DELAY_MS).unref();
