/**
 * `node --import tracepipe/register app.js`: makes the process attachable (the diagnostics server) and
 * starts the startup session when TRACEPIPE_ENABLE=1 and a flight recorder when TRACEPIPE_FLIGHT_RECORDER
 * is set. Problems are one line on stderr; the application runs regardless. Only the main thread does
 * anything (worker threads inherit --import): src/register-start.ts checks.
 *
 * Without anything asked for, this file is all that loads before the application runs: every file
 * through Node's ES module loader costs it ~1 ms (BENCHMARKS.md §43). The rest loads with the
 * diagnostics server, or at once when a session is asked for.
 */
export {};

/**
 * The diagnostics server starts once the process has run for SERVER_DELAY_MS, not during the import
 * nor at the loop's first turn: the loop turns while Node still loads the application's entry point,
 * so a timer of 0 made every process, `node -e 0` included, load the socket and the ~12 modules behind
 * it. A process that ends sooner (a CLI, a build step) never pays for them, and the application's own
 * start does not wait for them. The timer is unref'd, so it keeps no process alive; a process whose
 * loop never turns could not answer a client anyway. Started once the sessions asked for have: the
 * server's modules, loading meanwhile, would make the machinery load through import() (see
 * trackImport), a round trip per module later.
 */
const SERVER_DELAY_MS = 100;

const env = process.env;
// As startup-session.ts and flight-recorder.ts read them: unset, empty or 0 asks for nothing (a
// value they refuse is asked for, so that they say why).
const asks = {
  enable: !['', '0', undefined].includes(env.TRACEPIPE_ENABLE),
  recorder: !['', '0', undefined].includes(env.TRACEPIPE_FLIGHT_RECORDER?.trim()),
  cpuReady: env.TRACEPIPE_CPU_READY === '1',
};
// One line on stderr, as src/register-start.ts writes it (which may be what failed to load): node:fs
// through process.getBuiltinModule, or (before Node 20.16) an import of it, only then.
const failed = (what: string) => (e: unknown) => {
  const line = `tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`;
  const fs = process.getBuiltinModule ? Promise.resolve(process.getBuiltinModule('node:fs') as typeof import('node:fs')) : import('node:fs');
  return fs.then(({ writeSync }) => {
    try {
      writeSync(2, line);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') process.stderr.write(line);
    }
  });
};
const registerStart = (): Promise<typeof import('./register-start.js')> => import('./register-start.js');
if (asks.enable || asks.recorder || asks.cpuReady) {
  // Told to --require tracepipe/register (src/register.cts), which leaves what is asked to this import.
  (globalThis as Record<symbol, unknown>)[Symbol.for('tracepipe.register.started')] = true;
  // Whatever fails, loading included, is one line: the application starts as it would untraced.
  await registerStart()
    .then((r) => r.startAsked(asks))
    .catch(failed('tracing not started'));
}
setTimeout(() => void registerStart().then((r) => r.startServer()).catch(failed('diagnostics server not started')), SERVER_DELAY_MS).unref();
