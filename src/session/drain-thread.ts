import { workerThreads } from '../schema/this-thread.js';
import type { WorkerOptions } from 'node:worker_threads';
import type { HeaderInfo } from '../format/stream-header.js';
import type { DrainMessage, OtlpSinkSpec, SinkSpec } from './drain-protocol.js';
import { makeServiceWorker, markServiceWorker } from './service-workers.js';
type Worker = import('node:worker_threads').Worker;

/** What a session's drain is given (a worker drain as its workerData, or as its first message). */
export interface DrainSettings {
  readonly sab: SharedArrayBuffer;
  readonly sink: SinkSpec;
  /** The session also (or only, with sink kind 'none') exports over OTLP. */
  readonly otlp?: OtlpSinkSpec;
  readonly header: HeaderInfo;
  /** Trace origin on the process monotonic clock (ns, decimal string). */
  readonly originNs: string;
}

/**
 * A session's drain as its owner sees it: a worker thread (src/workers/drain-worker.ts), or a native
 * thread where one serves the session (src/sinks/native-drain.ts). Either says 'running', then
 * 'done' with its result, then exits.
 */
export interface DrainHandle {
  on(event: 'message', listener: (msg: DrainMessage) => void): unknown;
  on(event: 'error', listener: (e: Error) => void): unknown;
  on(event: 'exit', listener: () => void): unknown;
  /** Whether the drain keeps the process alive until it reports. */
  ref(): void;
  unref(): void;
  /** Gives the drain up (it did not finish in time). */
  terminate(): unknown;
  /** Ring sessions' dump requests (only a worker drains a ring). */
  postMessage(value: unknown, transfer?: readonly import('node:worker_threads').Transferable[]): void;
  /** A drain that cannot hear Atomics.notify: waits, until `deadline` (Date.now()) at most, for it to end the stream. */
  awaitStopped?(deadline: number): void;
}

/** Starts a drain without a worker for the sessions it can serve (undefined for the others). */
export type NativeDrainStarter = (settings: DrainSettings) => DrainHandle | undefined;
let nativeDrain: NativeDrainStarter | undefined;
/** Undefined, or throws, when it cannot load now: that session gets a worker, and a later one tries again. */
let loadNativeDrain: (() => NativeDrainStarter | undefined) | undefined;

/**
 * Offered as the session machinery loads (src/machinery.ts; the native drain is the sinks layer's: it
 * opens the session's file, which this layer cannot), loaded by the first session it may serve:
 * sessions it serves then run without a drain worker.
 */
export function offerNativeDrain(load: () => NativeDrainStarter | undefined): void {
  loadNativeDrain = load;
}

const ENTRY = new URL('../workers/drain-worker.js', import.meta.url);
const OPTIONS: WorkerOptions = { execArgv: [], stdout: false, stderr: false };

/** A drain thread started before the session that will use it is known (warmDrainThread). */
let warm: Worker | undefined;

/** A new drain thread, known as tracepipe's own (Runtime.Process's rundown names its role). */
function spawn(options: WorkerOptions): Worker {
  const worker = makeServiceWorker(() => new (workerThreads().Worker)(ENTRY, options));
  markServiceWorker(worker, 'tracepipe-drain');
  return worker;
}

/**
 * Starts a drain thread now for a session about to start (the startup session, as `tracepipe/register`
 * loads): its isolate boots and loads its code on its own thread while this one loads the session
 * machinery, instead of after it. It waits for its session's settings (drainThread), keeps no process
 * alive meanwhile, and is ended by discardWarmDrainThread if no session takes it.
 */
export function warmDrainThread(): void {
  if (warm) return;
  const worker = spawn(OPTIONS);
  // A warm thread that fails or ends before a session takes it is never given one: the session starts
  // its own thread and reports that one's errors, not an exit whose cause went unheard.
  const unusable = (): void => {
    if (warm === worker) warm = undefined;
  };
  worker.on('error', unusable);
  worker.once('exit', unusable);
  worker.unref();
  warm = worker;
}

/** A drain for a session's settings: a native one where it serves, else the warm worker if there is one, else a new one. */
export function drainThread(data: DrainSettings): DrainHandle {
  // TRACEPIPE_NATIVE_DRAIN=0 keeps every session on a worker, as TRACEPIPE_GC_HOOK=0 turns off every native part.
  const wanted = process.env.TRACEPIPE_NATIVE_DRAIN !== '0';
  if (wanted && !nativeDrain) {
    try {
      nativeDrain = loadNativeDrain?.();
    } catch {
      // require() refuses a module of ours that an import() has under way (the application's, of
      // another entry of tracepipe): a worker this time.
    }
  }
  const native = wanted ? nativeDrain?.(data) : undefined;
  if (native) return native;
  const worker = warm;
  warm = undefined;
  if (!worker) return spawn({ ...OPTIONS, workerData: data });
  worker.ref();
  worker.postMessage(data);
  return worker;
}

/** Ends the warm drain thread no session took. */
export function discardWarmDrainThread(): void {
  void warm?.terminate();
  warm = undefined;
}
