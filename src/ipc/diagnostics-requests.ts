/**
 * The diagnostics server's requests (loaded with the first connection, so an attachable process that
 * no client ever contacts loads only the listener): answers ProcessInfo, starts sessions that stream
 * to the requesting connection (CollectTracing), stops sessions (StopTracing) and dumps flight
 * recorders (DumpRecorder). One request per connection; whatever a client sends, the worst outcome is
 * an error reply and a closed connection.
 */
import type net from 'node:net';
import type { TraceSession } from '../session/session.js';
import { tracepipeVersion } from '../session/version.js';
import { holdSignalFlush } from './exit-flush.js';
import { type CollectRequest, decodeCollectRequest, decodeSessionId, encodeProcessInfo, encodeSessionId, encodeStopResult, type ProcessInfo } from './ipc-commands.js';
import { CommandSet, errorFrame, type Frame, FrameReader, IpcError, IpcErrorCode, MAX_REQUEST_PAYLOAD, okFrame, ProcessCommand, TracingCommand } from './ipc-protocol.js';
import { takeDescriptor } from './ipc-transport.js';
import { loadedSessionMachinery, loadSessionMachinery, type SessionMachinery } from '../machinery.js';
import { errorMessage } from '../schema/error-message.js';

/**
 * Connections still sending, awaiting a reply or receiving a dump; more are refused with Busy so a
 * flood stays bounded (in descriptors and in dumps waiting their turn).
 */
const MAX_PENDING = 32;
/** A request must arrive complete this soon after connecting. */
const REQUEST_TIMEOUT_MS = 5000;

function send(socket: net.Socket, frame: Uint8Array): void {
  socket.removeAllListeners('data');
  // A client that never reads its reply does not hold the connection open.
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
  socket.end(frame, () => socket.destroy());
}

function refuse(socket: net.Socket, e: unknown): void {
  if (e instanceof IpcError) send(socket, errorFrame(e.code, e.message));
  else send(socket, errorFrame(IpcErrorCode.SessionFailed, errorMessage(e)));
}

/** Why startSession refused a CollectTracing, as the error reply's code and message. */
function refusalOf(e: unknown, { session, providerSpec }: SessionMachinery): IpcError {
  const message = (e as Error)?.message?.replace(/^tracepipe: /, '') ?? String(e);
  if (e instanceof session.SessionLimitError) return new IpcError(IpcErrorCode.SessionLimit, message);
  if (e instanceof providerSpec.ProviderSpecError || e instanceof RangeError) return new IpcError(IpcErrorCode.BadRequest, message);
  return new IpcError(IpcErrorCode.SessionFailed, message);
}

export class DiagnosticRequests {
  private readonly pending = new Set<net.Socket>();
  /**
   * Connections a flight recorder's drain is writing a dump to (or will: dumps to clients take turns).
   * They count against MAX_PENDING, and only the dump's end closes them: the drain writes to the
   * descriptor, which must not be closed (and its number reused) under it. The drain gives up a dump
   * whose client does not read within its deadlines (docs/IPC.md, DumpRecorder).
   */
  private readonly dumping = new Set<net.Socket>();
  /** Sessions streaming to a connection, which is closed once the session is done. */
  private readonly streaming = new Map<TraceSession, net.Socket>();
  /**
   * Sessions whose id the client has (the drain sends the reply as it starts) but whose start has not
   * finished here yet: a StopTracing for one waits for it.
   */
  private readonly starting = new Map<number, Promise<TraceSession | undefined>>();

  /** A new connection (unref'd, its errors handled, by the listener), refused while the server closes. */
  accept(socket: net.Socket, closing: boolean): void {
    if (closing) return refuse(socket, new IpcError(IpcErrorCode.SessionFailed, 'the diagnostics server is closing'));
    if (this.pending.size + this.dumping.size >= MAX_PENDING) return refuse(socket, new IpcError(IpcErrorCode.Busy, 'too many requests in flight; try again'));
    this.pending.add(socket);
    socket.once('close', () => this.pending.delete(socket));
    const reader = new FrameReader(MAX_REQUEST_PAYLOAD);
    let answered = false;
    const answer = (f: () => void): void => {
      if (answered) return;
      answered = true;
      socket.removeAllListeners('data');
      socket.setTimeout(0);
      f();
    };
    socket.on('data', (chunk: Buffer) => {
      let frame: Frame | undefined;
      try {
        frame = reader.push(chunk);
      } catch (e) {
        return answer(() => refuse(socket, e));
      }
      if (frame) answer(() => void this.dispatch(socket, frame).catch((e: unknown) => refuse(socket, e)));
    });
    socket.on('end', () =>
      answer(() => refuse(socket, new IpcError(IpcErrorCode.BadFrame, reader.buffered > 0 ? `truncated message (${reader.buffered} bytes)` : 'empty request'))),
    );
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => answer(() => refuse(socket, new IpcError(IpcErrorCode.Timeout, `no complete request within ${REQUEST_TIMEOUT_MS} ms`))));
  }

  private async dispatch(socket: net.Socket, f: Frame): Promise<void> {
    if (f.commandSet === CommandSet.Process && f.commandId === ProcessCommand.ProcessInfo) return send(socket, okFrame(encodeProcessInfo(await this.info())));
    if (f.commandSet === CommandSet.Tracing && f.commandId === TracingCommand.CollectTracing) return this.collect(socket, decodeCollectRequest(f.payload));
    if (f.commandSet === CommandSet.Tracing && f.commandId === TracingCommand.StopTracing) return this.stop(socket, decodeSessionId(f.payload, 'StopTracing'));
    if (f.commandSet === CommandSet.Tracing && f.commandId === TracingCommand.DumpRecorder) return this.dumpRecorder(socket, decodeSessionId(f.payload, 'DumpRecorder'));
    throw new IpcError(IpcErrorCode.UnknownCommand, `unknown command ${f.commandSet}/${f.commandId}`);
  }

  /** The thread's sessions; none, loading nothing, while no copy of tracepipe has loaded its sessions. */
  private async sessions(): Promise<readonly TraceSession[]> {
    return (await loadedSessionMachinery())?.session.liveSessions() ?? [];
  }

  private async info(): Promise<ProcessInfo> {
    const machinery = await loadedSessionMachinery();
    let cwd = '';
    try {
      cwd = process.cwd();
    } catch {
      // The working directory was deleted.
    }
    return {
      pid: process.pid,
      startTimeMs: Math.round(performance.timeOrigin),
      nodeVersion: process.version,
      tracepipeVersion: tracepipeVersion(),
      cwd,
      title: process.title,
      argv: process.argv,
      execArgv: process.execArgv,
      sessions: machinery
        ? machinery.session.liveSessions().map((s) => ({
            id: s.id,
            providers: machinery.providerSpec.formatProviderSpec(s.providers),
            bufferingMode: s.bufferingMode,
            state: s.state,
            attached: this.streaming.has(s),
            buffer: s.capacity,
            ...(s.otlpCounts ? { otlp: s.otlpCounts } : {}),
          }))
        : [],
    };
  }

  private async collect(socket: net.Socket, q: CollectRequest): Promise<void> {
    const machinery = await loadSessionMachinery();
    const fd = takeDescriptor(socket);
    if (fd === undefined) throw new IpcError(IpcErrorCode.SessionFailed, `streaming a session needs a socket descriptor, which this platform (${process.platform}) does not expose`);
    let started!: (s: TraceSession | undefined) => void;
    const start = new Promise<TraceSession | undefined>((resolve) => (started = resolve));
    let id = 0;
    const reply = (sessionId: number): Uint8Array => {
      id = sessionId;
      this.starting.set(id, start);
      return okFrame(encodeSessionId(id));
    };
    let session: TraceSession;
    try {
      session = await machinery.session.startSession({
        providers: q.providers,
        output: { fd, prologue: reply },
        bufferingMode: q.bufferingMode,
        ...(q.bufferSizeMB !== 0 ? { bufferSizeMB: q.bufferSizeMB } : {}),
        rundown: q.rundown,
        keepProcessAlive: false,
      });
    } catch (e) {
      started(undefined);
      // Refused before the session asked for its reply (startSession checks everything first): say why.
      if (id === 0) throw refusalOf(e, machinery);
      // The drain may have written the reply already: closing is the only unambiguous answer left.
      socket.destroy();
      return;
    } finally {
      this.starting.delete(id);
    }
    started(session);
    this.pending.delete(socket);
    this.streaming.set(session, socket);
    const release = holdSignalFlush(machinery.session);
    void session.done.then(() => {
      this.streaming.delete(session);
      socket.destroy();
      release();
    });
  }

  /** A ring session writes what it holds to the connection (its reply frame first), then the connection closes. */
  private async dumpRecorder(socket: net.Socket, id: number): Promise<void> {
    const rings = (await this.sessions()).filter((s) => s.bufferingMode === 'ring' && s.state === 'running');
    const session = id === 0 ? rings[0] : rings.find((s) => s.id === id);
    if (!session) throw new IpcError(IpcErrorCode.UnknownSession, id === 0 ? `process ${process.pid} has no flight recorder` : `no flight recorder session ${id} in process ${process.pid}`);
    const fd = takeDescriptor(socket);
    if (fd === undefined) throw new IpcError(IpcErrorCode.SessionFailed, `streaming a dump needs a socket descriptor, which this platform (${process.platform}) does not expose`);
    this.pending.delete(socket);
    this.dumping.add(socket);
    const r = await session.dump({ fd, prologue: okFrame(encodeSessionId(session.id)) });
    this.dumping.delete(socket);
    // Given up before a byte went out (its turn never came): the client gets the reason, not a bare close.
    if (r.error && r.bytesWritten === 0) return refuse(socket, new IpcError(IpcErrorCode.SessionFailed, `flight recorder dump ${r.error}`));
    socket.destroy();
  }

  private async stop(socket: net.Socket, id: number): Promise<void> {
    const session = (await this.sessions()).find((s) => s.id === id) ?? (await this.starting.get(id));
    if (!session) throw new IpcError(IpcErrorCode.UnknownSession, `no session ${id} in process ${process.pid}`);
    const r = await session.stop();
    send(
      socket,
      okFrame(
        encodeStopResult({
          sessionId: id,
          status: r.status,
          eventsWritten: r.eventsWritten,
          eventsDropped: r.eventsDropped,
          bytesWritten: r.bytesWritten,
          error: r.error?.message ?? '',
        }),
      ),
    );
  }

  /** Refuses what is still pending and stops the sessions streaming to clients. */
  async close(): Promise<void> {
    for (const socket of this.pending) socket.destroy();
    await Promise.all([...this.streaming.keys()].map((s) => s.stop()));
  }
}
