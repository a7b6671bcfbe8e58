/**
 * What `tracepipe/register` does once the process asked for it (src/register.ts loads this module
 * only then): starts the sessions the environment asks for, and later the diagnostics server. Only
 * the main thread does anything (worker threads inherit --import, and NODE_OPTIONS' --require).
 */
import { errorMessage } from './schema/error-message.js';
import { isMainThread, requireBuiltin, trackImport } from './schema/this-thread.js';
import { loadDiagnosticsServer, loadFlightRecorder, loadGcHook, loadSessionMachinery, loadSessionMachineryNow, type SessionMachinery } from './machinery.js';

/** What the environment asks register for (src/register.ts reads it). */
export interface RegisterAsks {
  /** TRACEPIPE_ENABLE: the startup session. */
  readonly enable: boolean;
  /** TRACEPIPE_FLIGHT_RECORDER: a flight recorder. */
  readonly recorder: boolean;
  /** TRACEPIPE_CPU_READY=1: the CPU profiler made now. */
  readonly cpuReady: boolean;
}

/**
 * One line on stderr, written at once: a full pipe that the application made non-blocking takes it
 * after the application's own writes; a closed one loses it rather than end the application with
 * EPIPE, as process.stderr's error would.
 */
function warn(what: string, e: unknown): void {
  const line = `tracepipe: ${what}: ${errorMessage(e)}\n`;
  try {
    (requireBuiltin('node:fs') as typeof import('node:fs')).writeSync(2, line);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') process.stderr.write(line);
  }
}

/** Starts the diagnostics server (on the main thread): the process becomes attachable. */
export async function startServer(): Promise<void> {
  if (!isMainThread()) return;
  const { startDiagnosticServer } = await loadDiagnosticsServer();
  const { foreignHost } = await trackImport(import('./schema/provider-host.js'));
  // Another copy of tracepipe that hosts this thread already runs its server: the same one.
  const host = foreignHost as { startDiagnosticServer?: typeof startDiagnosticServer } | undefined;
  await (host?.startDiagnosticServer ?? startDiagnosticServer)().catch((e: unknown) => warn('diagnostics server not started', e));
}

/**
 * Does what `asks` asks for, on the main thread; resolves once the sessions asked for have started
 * (or said why not, in one line on stderr: the application runs regardless).
 */
export async function startAsked({ enable, recorder, cpuReady }: RegisterAsks): Promise<void> {
  if (!isMainThread()) return;
  // First, before loading the rest: the collections tracepipe's own loading causes wait in the GC ring
  // for the sessions asked for (docs/PROVIDERS.md, "Collections before the session").
  const releaseGcPauses = enable || recorder ? (await loadGcHook()).holdGcPauses() : undefined;
  let loaded: SessionMachinery | void = undefined;
  // Whatever throws below, the ring is released and a warm drain worker discarded.
  try {
    // Asked for: the main thread's CPU profiler made now, so that a sampler attached later starts warm
    // and names the functions V8 inlined before it (docs/PROVIDERS.md, "Names of optimized code").
    if (cpuReady) {
      const { loadNativeAddon } = await trackImport(import('./session/native-addon.js'));
      loadNativeAddon<{ prepare(): void }>('cpu_sampler').addon?.prepare();
    }
    if (!enable && !recorder) return;
    // The machinery defines the built-in providers first: sessions naming them then get their events.
    // If it cannot load, tracing steps aside and the application starts as it would untraced.
    // At once where Node can: require() reads the bundle in this thread, without import()'s round
    // trips (per file, they made the machinery ~14 ms later, BENCHMARKS.md §31.3).
    loaded = await Promise.resolve()
      .then(() => loadSessionMachineryNow() ?? loadSessionMachinery())
      .catch((e: unknown) => void warn('tracing not started', e));
    if (!loaded) return;
    // A session that needs a drain worker gets one booting on its own thread while this one starts
    // the sessions before it (the flight recorder's, after a natively drained startup session).
    if (recorder || loaded.startupDrainIsWorker()) loaded.warmDrainThread();
    await loaded.startStartupSession().catch((e: unknown) => warn('startup session not started', e));
    if (recorder) {
      await loadFlightRecorder()
        .then((r) => r.startFlightRecorderFromEnv())
        .catch((e: unknown) => warn('flight recorder not started', e));
    }
  } finally {
    loaded?.discardWarmDrainThread();
    releaseGcPauses?.();
  }
}
