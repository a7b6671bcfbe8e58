/**
 * `node --import tracepipe/register app.js`: makes the process attachable (the diagnostics server) and
 * starts the startup session when TRACEPIPE_ENABLE=1 and a flight recorder when TRACEPIPE_FLIGHT_RECORDER
 * is set. Problems are one line on stderr; the application
 * runs regardless. Only the main thread does anything (worker threads inherit --import).
 *
 * Without a session asked for, only the server loads: the session machinery (~2 MB of heap, which
 * would earn the idle process a V8 memory-reducer collection) loads on a client's first request.
 */
import { isMainThread, trackImport } from './schema/this-thread.js';
import { loadDiagnosticsServer, loadFlightRecorder, loadGcHook, loadSessionMachinery, loadSessionMachineryNow } from './machinery.js';

/**
 * The diagnostics server starts once the process has run for SERVER_DELAY_MS, not during the import
 * nor at the loop's first turn: the loop turns while Node still loads the application's entry point,
 * so a timer of 0 made every process, `node -e 0` included, load the socket and the ~12 modules behind
 * it. A process that ends sooner (a CLI, a build step) never pays for them, and the application's own
 * start does not wait for them. The timer is unref'd, so it keeps no process alive; a process whose
 * loop never turns could not answer a client anyway.
 */
const SERVER_DELAY_MS = 100;

async function startServer(warn: (what: string, e: unknown) => boolean): Promise<void> {
  const { startDiagnosticServer } = await loadDiagnosticsServer();
  const { foreignHost } = await trackImport(import('./schema/provider-host.js'));
  // Another copy of tracepipe that hosts this thread already runs its server: the same one.
  const host = foreignHost as { startDiagnosticServer?: typeof startDiagnosticServer } | undefined;
  await (host?.startDiagnosticServer ?? startDiagnosticServer)().catch((e: unknown) => warn('diagnostics server not started', e));
}

if (isMainThread()) {
  // As startup-session.ts and flight-recorder.ts read them: unset, empty or 0 asks for nothing (a
  // value they refuse is asked for, so that they say why).
  const enable = !['', '0', undefined].includes(process.env.TRACEPIPE_ENABLE);
  const recorder = !['', '0', undefined].includes(process.env.TRACEPIPE_FLIGHT_RECORDER?.trim());
  // First, before loading the rest: the collections tracepipe's own loading causes wait in the GC ring
  // for the sessions asked for (docs/PROVIDERS.md, "Collections before the session").
  const releaseGcPauses = enable || recorder ? (await loadGcHook()).holdGcPauses() : undefined;
  const warn = (what: string, e: unknown): boolean => process.stderr.write(`tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`);
  // Once the sessions asked for have started: the server's modules, loading meanwhile, would make
  // the machinery load through import() (see trackImport), a round trip per module later.
  const startServerLater = (): void => void setTimeout(() => void startServer(warn), SERVER_DELAY_MS).unref();
  if (!enable && !recorder) startServerLater();
  // Asked for: the main thread's CPU profiler made now, so that a sampler attached later starts warm
  // and names the functions V8 inlined before it (docs/PROVIDERS.md, "Names of optimized code").
  if (process.env.TRACEPIPE_CPU_READY === '1') {
    const { loadNativeAddon } = await trackImport(import('./session/native-addon.js'));
    loadNativeAddon<{ prepare(): void }>('cpu_sampler').addon?.prepare();
  }
  if (enable || recorder) {
    // The machinery defines the built-in providers first: sessions naming them then get their events.
    // If it cannot load, tracing steps aside and the application starts as it would untraced.
    // At once where Node can: require() reads the bundle in this thread, without import()'s round
    // trips (per file, they made the machinery ~14 ms later, BENCHMARKS.md §31.3).
    const loaded = await Promise.resolve()
      .then(() => loadSessionMachineryNow() ?? loadSessionMachinery())
      .catch((e: unknown) => void warn('tracing not started', e));
    // A session that needs a drain worker gets one booting on its own thread while this one starts
    // the sessions before it (the flight recorder's, after a natively drained startup session).
    if (loaded && (recorder || loaded.startupDrainIsWorker())) loaded.warmDrainThread();
    if (loaded) {
      await loaded.startStartupSession().catch((e: unknown) => warn('startup session not started', e));
      if (recorder) {
        const { startFlightRecorderFromEnv } = await loadFlightRecorder();
        await startFlightRecorderFromEnv().catch((e: unknown) => warn('flight recorder not started', e));
      }
    }
    loaded?.discardWarmDrainThread();
    releaseGcPauses?.();
    startServerLater();
  }
}
