/**
 * The public functions whose work lives in modules `import 'tracepipe'` does not load: each loads
 * what it needs through the seam (src/machinery.ts) on its first call. All of them return promises
 * already, except readTrace, whose reader loads when the trace is first read. TraceSession stands
 * for the sessions' class until it loads.
 */
import type { FlightRecorder, FlightRecorderOptions } from './flight-recorder.js';
import type { ProcessInfo, CollectRequest, StopResult } from '../ipc/ipc-commands.js';
import type { TargetListing, TraceStream } from '../ipc/diagnostics-client.js';
import type { BatchOptions, ByteSource, EventBatch, ReadOptions, SkimResult, TraceReadable, TraceSummary } from '../format/trace-reader.js';
import type { BlockEvent, RawPayload } from '../format/events-block.js';
import type { TraceEvent } from '../format/trace-event.js';
import { checkReorderWindow } from '../format/read-options.js';
import { loadDiagnosticsClient, loadFlightRecorder, loadTraceReader, sessionMachineryIfLoaded } from '../machinery.js';

export async function startFlightRecorder(options?: FlightRecorderOptions): Promise<FlightRecorder> {
  return (await loadFlightRecorder()).startFlightRecorder(options);
}

export async function processInfo(pid: number): Promise<ProcessInfo> {
  return (await loadDiagnosticsClient()).processInfo(pid);
}

export async function collectTracing(pid: number, request: CollectRequest): Promise<TraceStream> {
  return (await loadDiagnosticsClient()).collectTracing(pid, request);
}

export async function stopTracing(pid: number, sessionId: number): Promise<StopResult> {
  return (await loadDiagnosticsClient()).stopTracing(pid, sessionId);
}

export async function listTargets(): Promise<TargetListing[]> {
  return (await loadDiagnosticsClient()).listTargets();
}

/**
 * An async iterator that starts `start()`'s on its first next() and hands every call to it, in order:
 * calls made while it starts wait for that one start (a second start would read the trace again).
 */
function deferredIterator<T>(start: () => Promise<AsyncIterator<T>>): AsyncIterableIterator<T> {
  let inner: Promise<AsyncIterator<T>> | undefined;
  const it: AsyncIterableIterator<T> = {
    next: () => (inner ??= start()).then((i) => i.next()),
    return: async (value?: unknown) => {
      const i = inner && (await inner);
      return i?.return ? i.return(value) : { done: true, value: value as T };
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}

/** readTrace's object, its reader loaded when it is first read (summary, skim, batches or iteration). */
class DeferredTraceReadable implements TraceReadable {
  #reader: Promise<TraceReadable> | undefined;
  #loaded: TraceReadable | undefined;

  constructor(
    private readonly source: ByteSource,
    private readonly options: ReadOptions,
  ) {}

  #load(): Promise<TraceReadable> {
    this.#reader ??= loadTraceReader().then((m) => (this.#loaded = m.readTrace(this.source, this.options)));
    return this.#reader;
  }

  get outOfOrder(): number {
    return this.#loaded?.outOfOrder ?? 0;
  }

  async summary(): Promise<TraceSummary> {
    return (await this.#load()).summary();
  }

  async skim(onEvent: (e: BlockEvent, payload: RawPayload) => void): Promise<SkimResult> {
    return (await this.#load()).skim(onEvent);
  }

  batches(options?: BatchOptions): AsyncIterableIterator<EventBatch> {
    return deferredIterator(async () => (await this.#load()).batches(options)[Symbol.asyncIterator]());
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TraceEvent> {
    return deferredIterator(async () => (await this.#load())[Symbol.asyncIterator]());
  }
}

/** Reads a trace (src/format/trace-reader.ts); a bad option is refused here, at the call. */
export function readTrace(source: ByteSource, options: ReadOptions = {}): TraceReadable {
  checkReorderWindow(options.reorderWindowNs);
  return new DeferredTraceReadable(source, options);
}

type SessionClass = typeof import('../session/session.js').TraceSession;

/**
 * The sessions' class, for `x instanceof TraceSession`, without loading it: sessions are made by
 * startSession, never constructed, and before the session machinery loads there is none.
 */
export const TraceSession = Object.freeze({
  [Symbol.hasInstance]: (v: unknown): boolean => {
    const real = sessionMachineryIfLoaded()?.session.TraceSession;
    return real !== undefined && v instanceof real;
  },
}) as unknown as SessionClass;
export type TraceSession = InstanceType<SessionClass>;
