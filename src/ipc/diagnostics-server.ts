/**
 * The diagnostics server in the traced process: a listener on this process's endpoint that hands each
 * connection to the requests (diagnostics-requests.ts). It never keeps the process alive and does
 * nothing until a client connects. The requests, and the session machinery they drive, load with the
 * first connection: what `--import tracepipe/register` loads stays small enough that an idle
 * process's heap does not grow by the megabyte that earns it a V8 memory-reducer collection.
 */
import type { DiagnosticRequests } from './diagnostics-requests.js';
import { removeOnSignalExit } from './exit-flush.js';
import { onProcessExit } from '../session/process-exit.js';
import { endpointPath, listenPrivately, processKey, removeEndpoint } from './ipc-transport.js';
import type { Server as NetServer, Socket as NetSocket } from 'node:net';
import { isMainThread, requireBuiltin } from '../schema/this-thread.js';
import { loadDiagnosticRequests } from '../machinery.js';
const net = requireBuiltin('node:net') as typeof import('node:net');

export interface DiagnosticServer {
  /** The socket (or pipe) clients connect to. */
  readonly path: string;
  /** Stops sessions streaming to clients, closes the endpoint and removes it. */
  close(): Promise<void>;
}

let running: Promise<Server> | undefined;

/** Starts this process's diagnostics server (once; later calls return the same server). */
export function startDiagnosticServer(): Promise<DiagnosticServer> {
  running ??= startOnMainThread().catch((e: unknown) => {
    running = undefined;
    throw e;
  });
  return running;
}

async function startOnMainThread(): Promise<Server> {
  if (!isMainThread()) throw new Error('tracepipe: the diagnostics server runs on the main thread');
  return Server.start();
}

class Server implements DiagnosticServer {
  private requests: Promise<DiagnosticRequests> | undefined;
  private closed = false;
  private readonly remove = (): void => removeEndpoint(this.path);
  private forgetSignalCleanup: () => void = () => undefined;
  private forgetExit: () => void = () => undefined;

  private constructor(
    readonly path: string,
    private readonly server: NetServer,
  ) {}

  static async start(): Promise<Server> {
    const server = net.createServer({ allowHalfOpen: true });
    const s = new Server(endpointPath(process.pid, processKey()), server);
    server.on('connection', (socket) => s.accept(socket));
    await listenPrivately(server, s.path);
    // Failed accepts (out of descriptors) are the client's loss, never the application's crash.
    server.on('error', () => undefined);
    server.unref();
    s.forgetExit = onProcessExit(s.remove);
    s.forgetSignalCleanup = removeOnSignalExit(s.path);
    return s;
  }

  private accept(socket: NetSocket): void {
    socket.unref();
    socket.on('error', () => socket.destroy());
    // Until the requests are loaded the connection's bytes wait in its buffer (nothing reads them yet).
    this.requests ??= loadDiagnosticRequests().then((m) => new m.DiagnosticRequests());
    this.requests.then(
      (r) => r.accept(socket, this.closed),
      (e: unknown) => {
        socket.destroy();
        process.emitWarning(`tracepipe: a diagnostics request was dropped: its handling did not load (${(e as Error)?.message ?? String(e)})`);
      },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    running = undefined;
    // Requests whose handling never loaded have nothing to stop; the endpoint still closes.
    await this.requests?.then((r) => r.close(), () => undefined);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.remove();
    this.forgetExit();
    this.forgetSignalCleanup();
  }
}
