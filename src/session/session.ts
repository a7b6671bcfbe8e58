import { importTracked, isMainThread, requireBuiltin, workerThreads } from '../schema/this-thread.js';
import { processIdSeed } from './id-seed.js';
import { checkOtlpOutput, type OtlpOutput } from './otlp-output.js';
import type { MessagePort } from 'node:worker_threads';
import { BufferingMode, type BufferingModeName, capacityOf, Ctl, type MemoryLayout, planLayout, type RingCapacity, SessionMemory, SessionState } from '../buffers/session-memory.js';
import { FairQueue } from '../buffers/fair-queue.js';
import type { HeaderInfo } from '../format/stream-header.js';
import type { DrainMessage, DrainResult, DumpRequest, DumpResult, DumpTarget, OtlpSinkSpec, ProducerStats, SinkSpec } from './drain-protocol.js';
import type { OtlpExportStats } from '../format/otlp-export-stats.js';
import { announceClose, announceOpen, announceStarting } from './control-channel.js';
import { formatProviderSpec, normalizeProviders, type ProviderConfig, type ProviderRequest } from './provider-spec.js';
import { type OutputConsumer, type SessionOutput, StreamConsumer } from './session-output.js';
import { tracepipeVersion } from './version.js';
import { type DrainHandle, drainThread } from './drain-thread.js';
import { onProcessExit } from './process-exit.js';
import type { SessionDescriptor } from './session-descriptor.js';
import { SessionError, SessionLimitError } from './session-error.js';
import { providerRegistry } from '../schema/provider.js';
const { hostname } = requireBuiltin('node:os') as typeof import('node:os');

/** What every session takes; SessionOptions adds its output (a ring has none). */
export interface SessionSettings {
  /** dotnet-trace syntax `Name[:HexKeywords[:Level[:key=value;...]]]`, comma separated, or a list. */
  readonly providers: string | readonly ProviderRequest[];
  /**
   * 'drop' (default) loses events when the buffer is full; 'block' parks producers instead; 'ring'
   * (a flight recorder) overwrites the oldest and writes nothing until `session.dump()`.
   */
  readonly bufferingMode?: BufferingModeName;
  /** The session's whole budget: every thread's chunks come from it. Default 64. */
  readonly bufferSizeMB?: number;
  /** Whether providers write rundown (their onDisable events) into the session as it stops. Default true. */
  readonly rundown?: boolean;
  /**
   * Whether a running session keeps the process alive. Default: false for a file (a process that ends
   * without stop() still gets a complete file, flushed as it exits), true for stream and listener
   * outputs (their bytes go through this thread, which cannot deliver them while exiting).
   */
  readonly keepProcessAlive?: boolean;
  /** How long stop() waits for the drain to flush before giving up and failing the session: 1 ms to 2^31 - 1 ms. Default 30 s. */
  readonly stopTimeoutMs?: number;
  /**
   * Block mode: how long a producer stays parked while the drain frees no chunk at all (a consumer
   * that stalls, a disk that hangs) before it drops its event, counted with reason 'block-timeout',
   * and goes on without parking until the drain makes progress again. Default 5000 ms; 0 waits as
   * long as the consumer takes.
   */
  readonly blockTimeoutMs?: number;
}

export type SessionOptions =
  /** A file path, `{ stream }`, `{ onEvent }` or `{ fd }`; with `otlp`, also exported over OTLP. */
  | (SessionSettings & { readonly output: SessionOutput; readonly otlp?: OtlpOutput; readonly bufferingMode?: 'drop' | 'block' })
  /** Exported over OTLP only. */
  | (SessionSettings & { readonly output?: undefined; readonly otlp: OtlpOutput; readonly bufferingMode?: 'drop' | 'block' })
  /** A ring (flight recorder) has no output: each `session.dump()` writes one. */
  | (SessionSettings & { readonly bufferingMode: 'ring'; readonly output?: undefined });

export interface SessionResult {
  readonly eventsWritten: number;
  readonly eventsDropped: number;
  readonly bytesWritten: number;
  /** Per producing thread: drops, and in Block mode how often it parked and its longest wait. */
  readonly producers: readonly ProducerStats[];
  /** With an OTLP export: what was sent and what was dropped. */
  readonly otlp?: OtlpExportStats;
  readonly status: 'stopped' | 'failed';
  readonly error?: Error;
}

type Counts = Omit<SessionResult, 'status' | 'error'>;
const NO_COUNTS: Counts = { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, producers: [] };

let nextSessionId = 1;
const live = new Set<TraceSession>();
/** Sessions whose drain thread exists but has not reported running: the exit flush ends their streams too. */
const launching = new Set<TraceSession>();
const EXIT_FLUSH_MS = 3000;
const DEFAULT_BLOCK_TIMEOUT_MS = 5000;

export { SessionError, SessionLimitError };

const DEFAULT_MAX_SESSIONS = 8;
/**
 * Sessions past their checks whose drain is still starting: they count against the limit as much as
 * live ones, or concurrent starts could all pass it.
 */
let starting = 0;

/**
 * Each session has a drain thread and its own buffer, so a process caps how many run at once: tools
 * that attach and never read must not be able to grow the application without bound. Every live
 * session counts (started by code, by the environment or by a tool), stopping ones included, until
 * its drain has finished.
 */
function reserveSession(): void {
  const text = process.env.TRACEPIPE_MAX_SESSIONS?.trim() || String(DEFAULT_MAX_SESSIONS);
  const max = Number(text);
  if (!/^\d+$/.test(text) || max < 1) throw new SessionError(`TRACEPIPE_MAX_SESSIONS must be a whole number of sessions, at least 1, not '${process.env.TRACEPIPE_MAX_SESSIONS}'`);
  const running = live.size + starting;
  if (running >= max) {
    throw new SessionLimitError(
      `process ${process.pid} already runs ${running} tracing session${running === 1 ? '' : 's'}, its limit (TRACEPIPE_MAX_SESSIONS=${max}); stop one or raise the limit`,
    );
  }
  starting++;
}

/** A running session, owned by the thread that started it (the main thread). */
export class TraceSession {
  readonly id: number;
  readonly providers: readonly ProviderConfig[];
  /** 'drop' when Block was asked for but this output has no separate drain (see docs/BUFFERING.md). */
  readonly bufferingMode: BufferingModeName;
  state: 'starting' | 'running' | 'stopping' | 'stopped' | 'failed' = 'starting';
  error: Error | undefined;
  /** Settles when the session ends, however it ends; never rejects. */
  readonly done: Promise<SessionResult>;

  private resolveDone!: (r: SessionResult) => void;
  /** @internal The drain reported its result (its exit that follows is not a crash). */
  reported = false;
  private stopping: Promise<SessionResult> | undefined;
  private consumer: OutputConsumer | undefined;
  private stopTimer: NodeJS.Timeout | undefined;
  private lastDump = 0;
  /** Dumps asked for and not yet reported, by id. */
  private readonly dumps = new Map<number, (r: DumpResult) => void>();
  /** The dumps among them to files: one keeps the process alive, for its length. */
  private readonly fileDumps = new Set<number>();
  /** @internal Whether the session keeps the process alive (a dump to a file in progress does, for its length). */
  keepsAlive = true;

  /** The bytes of its buffer, and how many events of a typical size it holds (what a ring keeps when full). */
  get capacity(): RingCapacity {
    return capacityOf(this.memory);
  }

  /** Whether the session exports over OTLP (set as it launches). */
  exportsOtlp = false;

  /** With an OTLP export: items sent and dropped so far. */
  get otlpCounts(): { readonly sent: number; readonly dropped: number } | undefined {
    if (!this.exportsOtlp) return undefined;
    return { sent: Atomics.load(this.memory.i32, Ctl.OtlpItemsSent) >>> 0, dropped: Atomics.load(this.memory.i32, Ctl.OtlpItemsDropped) >>> 0 };
  }

  /** @internal */
  constructor(
    readonly memory: SessionMemory,
    providers: readonly ProviderConfig[],
    bufferingMode: BufferingModeName,
    private readonly worker: DrainHandle,
    readonly originNs: bigint,
    private readonly stopTimeoutMs: number,
    /** Whether the drain writes the output itself (a file or an fd), so it can end the stream while this thread cannot run. */
    readonly drainWritesOutput: boolean,
    /** @internal What every thread needs to write into it. */
    readonly descriptor: SessionDescriptor,
  ) {
    this.id = descriptor.id;
    this.providers = providers;
    this.bufferingMode = bufferingMode;
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  /** @internal */
  attachConsumer(c: OutputConsumer | undefined): void {
    this.consumer = c;
  }

  /** @internal */
  onDrainMessage(msg: DrainMessage): void {
    if (msg.type === 'data') {
      try {
        this.consumer?.consume(msg.bytes);
      } finally {
        this.memory.acknowledge(msg.bytes.length);
      }
    } else if (msg.type === 'dumped') {
      const waiter = this.dumps.get(msg.id);
      this.dumps.delete(msg.id);
      this.fileDumps.delete(msg.id);
      if (this.fileDumps.size === 0 && !this.keepsAlive) this.worker.unref();
      waiter?.(msg.result);
    } else if (msg.type === 'done') {
      this.reported = true;
      const r = msg.result;
      if (r.error && !this.error) this.error = new SessionError(`tracepipe session ${this.id} failed: ${r.error}`);
      void this.finish(r);
    }
  }

  private async finish(r: DrainResult): Promise<void> {
    await this.consumer?.finish().catch(() => undefined);
    this.end({ eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped, bytesWritten: r.bytesWritten, producers: r.producers, ...(r.otlp ? { otlp: r.otlp } : {}) });
  }

  /** Producers parked in this session right now (Block mode). */
  get parkedProducers(): number {
    return this.memory.parked;
  }

  /** @internal The drain is gone (finished, crashed or killed) or the output failed. */
  end(r: Counts): void {
    if (this.state === 'stopped' || this.state === 'failed') return;
    if (live.delete(this)) tell(this, false);
    this.state = this.error ? 'failed' : 'stopped';
    if (this.error) this.markFailed();
    announceClose(this.id);
    clearTimeout(this.stopTimer);
    for (const waiter of this.dumps.values()) waiter({ eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, error: `session ${this.id} ended before the dump was written` });
    this.dumps.clear();
    this.fileDumps.clear();
    this.worker.unref();
    this.resolveDone({ ...r, status: this.state, ...(this.error ? { error: this.error } : {}) });
  }

  /** @internal */
  fail(e: Error): void {
    if (!this.error) this.error = e;
    if (this.state === 'stopped' || this.state === 'failed') return;
    this.markFailed();
    announceClose(this.id);
  }

  /** The output is gone: producers stop, and parked ones are released to drop. */
  private markFailed(): void {
    this.memory.setState(SessionState.Failed);
    new FairQueue(this.memory).wakeAll();
  }

  /**
   * This thread stops writing first, so its last chunk is sealed before the drain's final pass; then
   * every producer learns the session is stopping and parked ones are released.
   */
  private beginStop(): void {
    announceClose(this.id);
    if (this.memory.state < SessionState.Stopping) this.memory.setState(SessionState.Stopping);
    new FairQueue(this.memory).wakeAll();
  }

  /** Flushes every event written before the call, from every thread, closes the output and resolves. */
  stop(): Promise<SessionResult> {
    if (this.stopping) return this.stopping;
    if (this.state === 'running') {
      this.state = 'stopping';
      // Whoever awaits the stop keeps the process alive until the drain reports.
      this.worker.ref();
      this.beginStop();
      // A drain stuck on its output (a pipe nobody reads) must not hang the caller.
      this.stopTimer = setTimeout(() => {
        this.fail(new SessionError(`tracepipe session ${this.id}: the drain did not finish within ${this.stopTimeoutMs} ms; output is incomplete`));
        this.end(NO_COUNTS);
        void this.worker.terminate();
      }, this.stopTimeoutMs);
      this.stopTimer.unref();
    }
    this.stopping = this.done;
    return this.stopping;
  }

  private requestDump(target: DumpTarget, reply?: MessagePort): number {
    if (this.bufferingMode !== 'ring') throw new SessionError(`session ${this.id} is not a ring session: only a ring has something to dump`);
    if (this.state !== 'running') throw new SessionError(`session ${this.id} is ${this.state}: dump() needs a running ring`);
    const id = ++this.lastDump;
    const request: DumpRequest = { type: 'dump', id, target, ...(reply ? { reply } : {}) };
    this.worker.postMessage(request, reply ? [reply] : []);
    this.memory.wakeDrain();
    return id;
  }

  /**
   * Ring sessions: writes what the ring holds now (every thread's newest events, in time order, with
   * what was overwritten counted as lost) to a file or an open descriptor, as one complete trace.
   * The ring keeps its contents: a later dump holds them too if they have not been overwritten.
   * A dump to a file keeps the process alive until it is written; one to a descriptor (a client that
   * reads it) does not, and is given up if its reader stalls (docs/BUFFERING.md, "Ring mode").
   */
  dump(output: string | { readonly fd: number; readonly prologue?: Uint8Array }, options: { readonly newFile?: boolean } = {}): Promise<DumpResult> {
    const target: DumpTarget =
      typeof output === 'string' ? { kind: 'file', path: output, ...(options.newFile ? { newFile: true } : {}) } : { kind: 'fd', fd: output.fd, ...(output.prologue ? { prologue: output.prologue } : {}) };
    if (target.kind === 'file' && target.path === '') throw new SessionError('dump path is empty');
    const id = this.requestDump(target);
    if (target.kind === 'file') {
      this.fileDumps.add(id);
      this.worker.ref();
    }
    return new Promise((resolve) => this.dumps.set(id, resolve));
  }

  /**
   * @internal A dump to a file from a thread that cannot wait for a message (the process is dying):
   * the drain writes it before any other and the thread waits in shared memory, at most `timeoutMs`.
   * Returns the dump's result, or undefined when it did not finish in time.
   */
  dumpSync(path: string, timeoutMs: number, newFile = false): DumpResult | undefined {
    const { MessageChannel, receiveMessageOnPort } = workerThreads();
    const { port1, port2 } = new MessageChannel();
    try {
      let id: number;
      try {
        id = this.requestDump({ kind: 'file', path, ...(newFile ? { newFile: true } : {}) }, port2);
      } catch (e) {
        port2.close();
        throw e;
      }
      const deadline = Date.now() + timeoutMs;
      for (let done = Atomics.load(this.memory.i32, Ctl.DumpsDone); done < id; done = Atomics.load(this.memory.i32, Ctl.DumpsDone)) {
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        Atomics.wait(this.memory.i32, Ctl.DumpsDone, done, left);
      }
      return receiveMessageOnPort(port1)?.message as DumpResult | undefined;
    } finally {
      port1.close();
    }
  }

  /**
   * @internal The process is exiting: tells the drain to end the stream now, without waiting for other
   * threads (they end with the process). Returns whether there is a flush to wait for (awaitExitFlush).
   */
  beginExitFlush(): boolean {
    if (this.state !== 'running' && this.state !== 'stopping' && this.state !== 'starting') return false;
    Atomics.store(this.memory.i32, Ctl.Exiting, 1);
    this.beginStop();
    return true;
  }

  /** @internal Waits in shared memory, until `deadline` (Date.now()) at most, for the drain begun by beginExitFlush. */
  awaitExitFlush(deadline: number): void {
    if (this.worker.awaitStopped) return this.worker.awaitStopped(deadline);
    while (this.memory.state === SessionState.Stopping && Date.now() < deadline) {
      Atomics.wait(this.memory.i32, Ctl.State, SessionState.Stopping, Math.min(50, Math.max(1, deadline - Date.now())));
    }
  }
}

/**
 * Synchronous flush of every live session as the process exits: file and fd outputs get their last
 * events and their end-of-stream block. All drains work at once, within one EXIT_FLUSH_MS in all.
 */
export function flushSessionsOnExit(): void {
  // A session still starting has a drain that will write its stream's end once it runs (its output may
  // be open already): a signal that ends the process then leaves a complete file, not a cut one.
  const flushing = [...live, ...launching].filter((s) => s.beginExitFlush());
  const deadline = Date.now() + EXIT_FLUSH_MS;
  for (const s of flushing) s.awaitExitFlush(deadline);
}

onProcessExit(flushSessionsOnExit);

/** Told when a session goes live (true) and when it ends (false). */
export type SessionWatcher = (session: TraceSession, live: boolean) => void;
const watchers = new Set<SessionWatcher>();

/** Calls `watcher` for every live session now and as sessions start and end, until the returned function is called. */
export function watchSessions(watcher: SessionWatcher): () => void {
  watchers.add(watcher);
  for (const s of live) watcher(s, true);
  return () => watchers.delete(watcher);
}

function tell(session: TraceSession, isLive: boolean): void {
  for (const w of watchers) w(session, isLive);
}

function headerInfo(id: number, providers: readonly ProviderConfig[], mode: string, bufferSizeMB: number, originNs: bigint, wallNs: bigint): HeaderInfo {
  return {
    pid: process.pid,
    processTitle: process.title,
    argv: process.argv,
    execArgv: process.execArgv,
    nodeVersion: process.version,
    tracepipeVersion: tracepipeVersion(),
    platform: process.platform,
    arch: process.arch,
    hostname: hostname(),
    idSeed: processIdSeed(),
    clock: { wallClockNs: wallNs.toString(), monotonicNs: originNs.toString() },
    session: { id, providers: formatProviderSpec(providers), bufferingMode: mode, bufferSizeMB },
  };
}

function otlpOutput(o: unknown): OtlpSinkSpec {
  try {
    return checkOtlpOutput(o);
  } catch (e) {
    throw new SessionError((e as Error).message);
  }
}

function sinkFor(output: SessionOutput | undefined, mode: unknown, otlp: boolean): SinkSpec {
  if (mode === 'ring') {
    if (otlp) throw new SessionError("a 'ring' session has no OTLP export: its events are written by session.dump()");
    if (output !== undefined) throw new SessionError("a 'ring' session has no output: its events are written by session.dump()");
    return { kind: 'ring' };
  }
  if (output === undefined && otlp) return { kind: 'none' };
  if (typeof output === 'string') {
    if (output === '') throw new SessionError('output path is empty');
    return { kind: 'file', path: output };
  }
  if (output && typeof output === 'object' && 'fd' in output) {
    if (!Number.isInteger(output.fd) || output.fd < 0) throw new SessionError('output fd must be an open file descriptor');
    if (output.prologue !== undefined && typeof output.prologue !== 'function') throw new SessionError('output prologue must be a function');
    return { kind: 'fd', fd: output.fd };
  }
  if (output && typeof output === 'object') {
    if ('stream' in output && output.stream && typeof output.stream.write === 'function') return { kind: 'port' };
    if ('onEvent' in output && typeof output.onEvent === 'function') return { kind: 'port' };
  }
  throw new SessionError('output must be a file path, { stream: Writable }, { onEvent(e) {} } or { fd }');
}

const BUFFERING_MODES = { drop: BufferingMode.Drop, block: BufferingMode.Block, ring: BufferingMode.Ring } as const;

/** setTimeout's longest delay (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Options checked and completed with their defaults. */
interface SessionPlan {
  readonly providers: readonly ProviderConfig[];
  readonly output: SessionOutput | undefined;
  readonly sink: SinkSpec;
  readonly otlp: OtlpSinkSpec | undefined;
  readonly mode: BufferingModeName;
  readonly bufferSizeMB: number;
  readonly layout: MemoryLayout;
  readonly rundown: boolean;
  readonly keepProcessAlive: boolean;
  readonly stopTimeoutMs: number;
  readonly blockTimeoutMs: number;
}

/** Every option, checked before anything is created: a bad one gets a clear error and leaves no trace. */
function planSession(options: SessionOptions): SessionPlan {
  if (!isMainThread()) throw new SessionError('sessions are owned by the main thread; start them there (worker threads produce into them automatically)');
  if (!options || typeof options !== 'object') throw new SessionError('startSession needs an options object');
  const providers = normalizeProviders(options.providers);
  const requested = options.bufferingMode ?? 'drop';
  if (requested !== 'drop' && requested !== 'block' && requested !== 'ring') throw new SessionError(`bufferingMode must be 'drop', 'block' or 'ring', not ${JSON.stringify(requested)}`);
  const otlp = (options as { otlp?: unknown }).otlp === undefined ? undefined : otlpOutput((options as { otlp?: unknown }).otlp);
  const sink = sinkFor(options.output, requested, otlp !== undefined);
  const bufferSizeMB = options.bufferSizeMB ?? 64;
  if (typeof bufferSizeMB !== 'number' || !Number.isFinite(bufferSizeMB)) throw new SessionError('bufferSizeMB must be a number');
  const layout = planLayout(bufferSizeMB);
  const rundown = options.rundown ?? true;
  if (typeof rundown !== 'boolean') throw new SessionError('rundown must be a boolean');
  const keepProcessAlive = options.keepProcessAlive ?? sink.kind === 'port';
  if (typeof keepProcessAlive !== 'boolean') throw new SessionError('keepProcessAlive must be a boolean');
  const stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
  if (typeof stopTimeoutMs !== 'number' || !(stopTimeoutMs >= 1 && stopTimeoutMs <= MAX_TIMEOUT_MS)) {
    throw new SessionError(`stopTimeoutMs must be a number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, not ${typeof stopTimeoutMs === 'string' ? JSON.stringify(stopTimeoutMs) : String(stopTimeoutMs)}`);
  }
  let mode: BufferingModeName = requested;
  if (mode === 'block' && sink.kind === 'port') {
    // Those outputs are consumed on the owning thread: a producer parked there would wait on itself.
    mode = 'drop';
    process.emitWarning('tracepipe: bufferingMode "block" needs an output drained off the main thread (a file or an fd); this session uses "drop"');
  }
  const blockTimeoutMs = options.blockTimeoutMs ?? DEFAULT_BLOCK_TIMEOUT_MS;
  if (!Number.isInteger(blockTimeoutMs) || blockTimeoutMs < 0 || blockTimeoutMs > MAX_TIMEOUT_MS) {
    throw new SessionError(`blockTimeoutMs must be a whole number of milliseconds from 0 (no limit) to ${MAX_TIMEOUT_MS}, not ${String(blockTimeoutMs)}`);
  }
  return { providers, output: options.output, sink, otlp, mode, bufferSizeMB, layout, rundown, keepProcessAlive, stopTimeoutMs, blockTimeoutMs };
}

/**
 * Starts a session; resolves once its drain is running and every thread that should is enabled. The
 * calling thread writes into it from the call on: what it writes before the drain runs waits in the
 * session's buffer (in Block mode, parking for the starting drain when it is full, with a 5 s block timeout where the session has none); providers' onEnable and other
 * threads follow once the drain runs (docs/BUFFERING.md).
 * Every option, and the session limit, is checked before anything exists (no buffer, no drain thread,
 * no file touched, an fd output's prologue not asked for), so a refusal leaves no trace. Past the
 * limit (TRACEPIPE_MAX_SESSIONS, default 8; every live session counts) it throws SessionLimitError.
 */
export async function startSession(options: SessionOptions): Promise<TraceSession> {
  const plan = planSession(options);
  reserveSession();
  let session: TraceSession;
  try {
    session = await launch(plan);
  } finally {
    starting--;
  }
  // Its output can fail as soon as the drain runs (a reader gone already): then it has ended, and
  // must not come back to life here as a running session that nobody stops.
  if (session.state !== 'starting') return session;
  session.state = 'running';
  live.add(session);
  tell(session, true);
  announceOpen(session.descriptor);
  return session;
}

/** Creates the session's memory, in which this thread writes at once, and its drain; resolves once the drain runs. */
async function launch(plan: SessionPlan): Promise<TraceSession> {
  // Taken now: sessions started together reach their drains' start in any order (a listener's parser loads first).
  const id = nextSessionId++;
  const memory = SessionMemory.create(plan.layout, BUFFERING_MODES[plan.mode], plan.blockTimeoutMs);
  const originNs = process.hrtime.bigint();
  const descriptor: SessionDescriptor = { id, sab: memory.sab, providers: plan.providers, originNs: originNs.toString(), rundown: plan.rundown };
  memory.setState(SessionState.Enabled);
  announceStarting(descriptor);
  try {
    // The drain (its file, header and thread) starts after the caller's synchronous code, whose events
    // wait in the buffers from the call on: its first event 3.8 ms sooner (BENCHMARKS.md §39). Not a Block session's,
    // whose writer parks for its drain once the buffers fill. What the built-in providers it names do
    // loads while the drain thread starts, before any onEnable can run.
    if (plan.mode !== 'block') await Promise.resolve();
    const draining = startDrain(plan, memory, descriptor);
    const machinery = Promise.all(plan.providers.map((c) => providerRegistry.get(c.name)?.loadMachinery()));
    const session = await draining;
    await machinery;
    return session;
  } catch (e) {
    // What this thread wrote meanwhile goes with the session that never ran.
    memory.setState(SessionState.Failed);
    announceClose(id);
    throw e;
  }
}

/** Starts the session's drain thread on `memory`; resolves once it runs. */
async function startDrain(plan: SessionPlan, memory: SessionMemory, descriptor: SessionDescriptor): Promise<TraceSession> {
  const { providers, sink, mode, bufferSizeMB, output } = plan;
  const { id } = descriptor;
  const originNs = BigInt(descriptor.originNs);
  const prologue = typeof output === 'object' && 'fd' in output ? output.prologue?.(id) : undefined;
  // The listener's parser loads only for a listener, before the drain exists (its first bytes need it).
  const listener = typeof output === 'object' && 'onEvent' in output ? ((await importTracked(new URL('./listener-consumer.js', import.meta.url))) as typeof import('./listener-consumer.js')).ListenerConsumer : undefined;
  const wallNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n;
  const worker = drainThread({
    sab: memory.sab,
    sink: prologue && sink.kind === 'fd' ? { ...sink, prologue } : sink,
    ...(plan.otlp ? { otlp: plan.otlp } : {}),
    header: headerInfo(id, providers, mode, bufferSizeMB, originNs, wallNs),
    originNs: originNs.toString(),
  });
  const session = new TraceSession(memory, providers, mode, worker, originNs, plan.stopTimeoutMs, sink.kind === 'file' || sink.kind === 'fd' || sink.kind === 'none', descriptor);
  launching.add(session);
  session.exportsOtlp = plan.otlp !== undefined;
  if (typeof output === 'object' && 'stream' in output) session.attachConsumer(new StreamConsumer(output.stream, memory, (e) => session.fail(e)));
  else if (listener && typeof output === 'object' && 'onEvent' in output) session.attachConsumer(new listener((e) => output.onEvent(e)));

  try {
    await drainRunning(session, worker);
  } finally {
    launching.delete(session);
  }
  // Only now: adding a 'message' listener refs the worker's port again.
  session.keepsAlive = plan.keepProcessAlive;
  if (!plan.keepProcessAlive) worker.unref();
  return session;
}

/** Resolves once the session's drain thread runs; rejects if it fails or exits first. */
function drainRunning(session: TraceSession, worker: DrainHandle): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let running = false;
    worker.on('message', (msg: DrainMessage) => {
      if (msg.type === 'running') {
        running = true;
        resolve();
      } else if (msg.type === 'failed') {
        reject(new SessionError(`cannot start session: ${msg.error}`));
      } else session.onDrainMessage(msg);
    });
    worker.on('error', (e) => {
      if (!running) reject(new SessionError(`cannot start session: ${e.message}`));
      else session.fail(new SessionError(`tracepipe session ${session.id}: drain thread crashed: ${e.message}`));
    });
    worker.on('exit', () => {
      if (!running) return reject(new SessionError('cannot start session: the drain thread exited'));
      // A drain that exits without a result died: the output is incomplete but readable up to here.
      if (!session.reported && session.state !== 'stopped' && session.state !== 'failed') {
        session.fail(session.error ?? new SessionError(`tracepipe session ${session.id}: drain thread exited unexpectedly`));
        session.end(NO_COUNTS);
      }
    });
  });
}

/** Sessions this process is running now. */
export function liveSessions(): readonly TraceSession[] {
  return [...live];
}
