import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Level } from '../schema/level.js';
import { defineProvider } from '../schema/provider.js';
import { ProviderSessions } from './provider-sessions.js';

type Handler = (message: unknown, name: string | symbol) => void;

// A client request's state rides on it under private symbols: it lives exactly as long as the request
// and costs less than a WeakMap entry per request.
const STARTED = Symbol('tracepipe.started');
const STATUS = Symbol('tracepipe.status');
const BYTES = Symbol('tracepipe.bytes');

interface Tracked {
  [STARTED]?: number;
  [STATUS]?: number;
  [BYTES]?: number;
}

// The module's binding, not the global: Node defines the global `performance` as an accessor, which
// every read would go through.
const now = () => performance.now();

/**
 * A server socket's requests in flight, oldest first (HTTP/1 answers them in order, even pipelined
 * ones), and its bytesWritten when the previous response finished: what it wrote since belongs to the
 * response finishing now. Kept beside the socket, not on it or on the request, so the application's
 * objects keep their shapes.
 */
interface ServerSocketState {
  readonly startedMs: number[];
  writtenMark: number;
}
const serverSockets = new WeakMap<Socket, ServerSocketState>();

const http: Record<string, Handler> = {
  'http.server.request.start': (m) => {
    const { socket } = m as { socket: Socket };
    const state = serverSockets.get(socket);
    if (state === undefined) serverSockets.set(socket, { startedMs: [now()], writtenMark: socket.bytesWritten });
    else state.startedMs.push(now());
  },
  'http.server.response.finish': (m) => {
    const { request, response, socket } = m as { request: IncomingMessage; response: ServerResponse; socket: Socket };
    const state = serverSockets.get(socket);
    if (state === undefined || state.startedMs.length === 0) return;
    const started = state.startedMs.shift()!;
    const written = socket.bytesWritten;
    const t = now();
    nodeChannels.HttpServerRequest.writeAt(t, request.method ?? '', request.url ?? '', response.statusCode, written - state.writtenMark, t - started);
    state.writtenMark = written;
  },
  'http.client.request.start': (m) => {
    (m as { request: ClientRequest & Tracked }).request[STARTED] = now();
  },
  'http.client.response.finish': (m) => {
    const { request, response } = m as { request: ClientRequest & Tracked; response: IncomingMessage };
    const t = request[STARTED];
    if (t === undefined) return;
    nodeChannels.HttpClientRequest.write(request.method, request.host, request.path, response.statusCode ?? 0, contentLength(response.headers['content-length']), now() - t, '');
  },
  'http.client.request.error': (m) => {
    const { request, error } = m as { request: ClientRequest & Tracked; error: Error };
    const t = request[STARTED];
    if (t === undefined) return;
    nodeChannels.HttpClientRequest.write(request.method, request.host, request.path, 0, -1, now() - t, String(error?.message ?? error));
  },
};

interface UndiciRequest extends Tracked {
  readonly method: string;
  readonly origin: string;
  readonly path: string;
}

function undiciEnd(request: UndiciRequest, error: string): void {
  const t = request[STARTED];
  if (t === undefined) return;
  request[STARTED] = undefined;
  nodeChannels.UndiciRequest.write(request.method, String(request.origin), request.path, request[STATUS] ?? 0, request[BYTES] ?? -1, now() - t, error);
}

const undici: Record<string, Handler> = {
  'undici:request:create': (m) => {
    (m as { request: UndiciRequest }).request[STARTED] = now();
  },
  'undici:request:headers': (m) => {
    const { request, response } = m as { request: UndiciRequest; response: { statusCode: number; headers: readonly (Buffer | string)[] } };
    request[STATUS] = response.statusCode;
    const h = response.headers;
    for (let i = 0; i + 1 < h.length; i += 2) {
      if (String(h[i]).toLowerCase() === 'content-length') request[BYTES] = contentLength(String(h[i + 1]));
    }
  },
  'undici:request:trailers': (m) => undiciEnd((m as { request: UndiciRequest }).request, ''),
  'undici:request:error': (m) => {
    const { request, error } = m as { request: UndiciRequest; error: Error };
    undiciEnd(request, String(error?.message ?? error));
  },
};

function watchSocket(side: string): Handler {
  return (m) => {
    const socket = (m as { socket: Socket }).socket;
    const t = now();
    // Read the peer while connected: a closed socket no longer knows it.
    let address = socket.remoteAddress;
    let port = socket.remotePort;
    if (address === undefined) {
      socket.once('connect', () => {
        address = socket.remoteAddress;
        port = socket.remotePort;
      });
    }
    socket.once('close', () => {
      nodeChannels.NetSocket.write(side, address ?? '', port ?? 0, socket.bytesRead, socket.bytesWritten, now() - t);
    });
  };
}

const net: Record<string, Handler> = {
  'net.client.socket': watchSocket('client'),
  'net.server.socket': watchSocket('server'),
};

function contentLength(v: string | undefined): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : -1;
}

const subscribed = new Set<Record<string, Handler>>();

function toggle(group: Record<string, Handler>, on: boolean): void {
  if (on === subscribed.has(group)) return;
  for (const [name, fn] of Object.entries(group)) (on ? subscribe : unsubscribe)(name, fn);
  if (on) subscribed.add(group);
  else subscribed.delete(group);
}

// Subscribed only while a session wants the events (seed 000): Node skips publishing to a channel
// nobody listens to, so the bridge costs nothing otherwise.
const sessions = new ProviderSessions('Node.Channels', (s) => {
  const c = nodeChannels;
  toggle(http, s.size > 0 && (c.HttpServerRequest.enabled || c.HttpClientRequest.enabled));
  toggle(undici, s.size > 0 && c.UndiciRequest.enabled);
  toggle(net, s.size > 0 && c.NetSocket.enabled);
});

/** `Node.Channels`: Node's built-in diagnostics_channel messages (http, undici/fetch, net) as events. */
export const nodeChannels = defineProvider('Node.Channels', {
  keywords: { http: 0x1n, undici: 0x2n, net: 0x4n },
  events: {
    HttpServerRequest: {
      id: 1,
      level: Level.Informational,
      keywords: ['http'],
      fields: [['method', 'string'], ['url', 'string'], ['status', 'u16'], ['bytes', 'f64'], ['durationMs', 'f64']],
      doc: 'An http server request, written when its response finished; bytes were written to the socket for it.',
    },
    HttpClientRequest: {
      id: 2,
      level: Level.Informational,
      keywords: ['http'],
      fields: [['method', 'string'], ['host', 'string'], ['path', 'string'], ['status', 'u16'], ['bytes', 'f64'], ['durationMs', 'f64'], ['error', 'string']],
      doc: 'An http client request, written when the response headers arrived (bytes: content-length, -1 if unknown) or it failed.',
    },
    UndiciRequest: {
      id: 3,
      level: Level.Informational,
      keywords: ['undici'],
      fields: [['method', 'string'], ['origin', 'string'], ['path', 'string'], ['status', 'u16'], ['bytes', 'f64'], ['durationMs', 'f64'], ['error', 'string']],
      doc: 'An undici request (fetch), written when its body ended or it failed (bytes: content-length, -1 if unknown).',
    },
    NetSocket: {
      id: 4,
      level: Level.Informational,
      keywords: ['net'],
      fields: [['side', 'string'], ['remoteAddress', 'string'], ['remotePort', 'u16'], ['bytesRead', 'f64'], ['bytesWritten', 'f64'], ['durationMs', 'f64']],
      doc: 'A TCP socket (client or server side), written when it closed.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
