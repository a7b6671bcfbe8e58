import { requireBuiltin } from '../schema/this-thread.js';
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { elapsedMs } from '../schema/milliseconds.js';
import { attachCallbacks, type EnableContext } from '../schema/provider.js';
import { currentSpanId, enterSpan, enterSpanSynchronously, nextSpanId, SAMPLED_OUT } from '../schema/span-context.js';
import { ProviderSessions } from './provider-sessions.js';
import { enterTrace, type IncomingContext, outgoingContext, parseTraceparent } from './trace-context.js';
import { TracingChannelBridge } from './tracing-channel-bridge.js';
import { nodeChannels } from './definitions/channels.js';
const { subscribe, unsubscribe } = requireBuiltin('node:diagnostics_channel') as typeof import('node:diagnostics_channel');
const { performance } = requireBuiltin('node:perf_hooks') as typeof import('node:perf_hooks');

type Handler = (message: unknown, name: string | symbol) => void;

/** A client request's state while it is in flight. */
interface Tracked {
  started: number;
  status: number;
  bytes: number;
  span: number;
}

/** Its constructor returns the object it is given, so a subclass's private field lands on that object. */
class Lender {
  constructor(o: object) {
    return o;
  }
}

/**
 * A client request's state rides on it in a private field: nothing the application can see (not its
 * keys, its symbols, console.log of it, nor a frozen object's frozenness), unlike a property, which
 * showed in `console.log(req)` traced and not untraced; and it costs less than a WeakMap entry
 * (BENCHMARKS.md §10). It lives exactly as long as the request.
 */
class RequestState extends Lender {
  #state: Tracked | undefined;

  private constructor(o: object, state: Tracked) {
    super(o);
    this.#state = state;
  }

  static track(request: object, span: number): void {
    const state = { started: now(), status: 0, bytes: -1, span };
    if (#state in request) (request as RequestState).#state = state;
    else new RequestState(request, state);
  }

  static get(request: object): Tracked | undefined {
    return #state in request ? (request as RequestState).#state : undefined;
  }

  /** The state, forgotten: a request ends once. */
  static take(request: object): Tracked | undefined {
    if (!(#state in request)) return undefined;
    const r = request as RequestState;
    const state = r.#state;
    r.#state = undefined;
    return state;
  }
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
  /** The span current where the connection's first request began: every request of the connection begins there. */
  readonly context: number;
  /**
   * The requests in flight: the oldest one's start and span (0: none; SAMPLED_OUT: left out by head
   * sampling) in fields, the pipelined ones after it in `more` as pairs. One in flight is the rule,
   * and a queue's shift() per response cost ~270 instructions on Node 24 (BENCHMARKS.md §6).
   */
  inFlight: number;
  firstMs: number;
  firstSpan: number;
  more: number[] | undefined;
  writtenMark: number;
  /** The socket's handle when its first request began (null: none), whose count bytesWrittenBy reads. */
  readonly handle: { readonly bytesWritten?: unknown } | null;
}
const serverSockets = new WeakMap<Socket, ServerSocketState>();

/**
 * `socket.bytesWritten` without its cost in the usual case. The getter copies the socket's write
 * buffer to add up what is still queued in it (0.4 % of a busy server's time, once per response);
 * with nothing queued, which is the rule once a response has been handed on, it is what the socket's
 * handle has written, net.Socket's own first term. The handle is the one the connection's first
 * request saw: reading it again through `socket._handle` is a getter whose keyed load of Node's
 * private symbol is megamorphic in any process with a few kinds of socket (two calls, ~230
 * instructions a response on Node 20, BENCHMARKS.md §6). A server socket keeps its handle until it is
 * destroyed; a handle closed since reads 0, and the socket's own count is asked then, as it is for
 * anything else.
 */
function bytesWrittenBy(socket: Socket, state: ServerSocketState): number {
  const h = state.handle;
  if (h && socket.writableLength === 0 && !(socket as Socket & { readonly _pendingData?: unknown })._pendingData) {
    const n = h.bytesWritten;
    if (typeof n === 'number' && n > 0 && n >= state.writtenMark) return n;
  }
  return socket.bytesWritten;
}

/** A server socket's handle, where it has one (a connection handed over as a plain stream has none). */
function handleOf(socket: Socket): { readonly bytesWritten?: unknown } | null {
  const h = (socket as Socket & { readonly _handle?: unknown })._handle;
  return typeof h === 'object' && h !== null ? h : null;
}

/**
 * The caller's W3C trace context, if the request has a `traceparent` header. Looked for in the raw
 * headers, by length and two letters of `trace` before any lower-casing: a request without one costs
 * a pass over its header names, and Node never builds `request.headers` for it (which costs several
 * times the pass where the application reads no header). Two traceparent headers are malformed (W3C).
 */
function incomingContext(request: IncomingMessage): IncomingContext | undefined {
  const raw = request.rawHeaders;
  // A message some library publishes with a request of its own making may have no raw headers.
  if (!Array.isArray(raw)) return undefined;
  let traceparent: string | undefined;
  let tracestate: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if ((name.length !== 11 && name.length !== 10) || (name.charCodeAt(0) | 0x20) !== 0x74 || (name.charCodeAt(4) | 0x20) !== 0x65) continue;
    const lower = name.toLowerCase();
    if (lower === 'traceparent') {
      if (traceparent !== undefined) return undefined;
      traceparent = raw[i + 1]!;
    } else if (lower === 'tracestate') (tracestate ??= []).push(raw[i + 1]!);
  }
  return traceparent === undefined ? undefined : parseTraceparent(traceparent, tracestate);
}

const http: Record<string, Handler> = {
  'http.server.request.start': (m) => {
    const { request, socket } = m as { request: IncomingMessage; socket: Socket };
    const state = serverSockets.get(socket);
    // Node parses every request of a keep-alive connection in the connection's own async context,
    // which the previous request's span (below) changed: each request begins where the connection's
    // first one did (not as the child of the one before it), so its context is not asked again.
    if (!acrossAwait) enterSpanSynchronously(0);
    const context = state === undefined ? currentSpanId() : state.context;
    const c = nodeChannels;
    // Head sampling: a root request is kept or left out whole; one begun under a span follows it.
    requestsSeen++;
    const kept = context > 0 || (context === 0 && (sampleRate >= 1 || Math.random() < sampleRate));
    if (kept) requestsKept++;
    // One clock read for the span's begin and the request event's start (BENCHMARKS.md §6, issue 29).
    const t = now();
    const span = !kept ? SAMPLED_OUT : c.HttpServer.enabled ? nextSpanId() : 0;
    if (span > 0) c.HttpServer.beginType.writeAt(t, span, context, request.method ?? '', request.url ?? '');
    const incoming = span > 0 || propagate ? incomingContext(request) : undefined;
    if (incoming !== undefined && span > 0 && c.TraceContext.enabled) c.TraceContext.write(span, incoming.traceId, incoming.parentId, incoming.flags, incoming.traceState);
    if (state === undefined) serverSockets.set(socket, { context, inFlight: 1, firstMs: t, firstSpan: span, more: undefined, writtenMark: socket.bytesWritten, handle: handleOf(socket) });
    else if (state.inFlight++ === 0) {
      state.firstMs = t;
      state.firstSpan = span;
    } else (state.more ??= []).push(t, span);
    // Node calls the application's request handler right after this message, in this execution:
    // the request's span is current there, and (unless context=sync) in everything the handler
    // starts (an outgoing fetch becomes its child). A left-out request's children are left out.
    // Without request spans nothing can be its child: the connection's context, as it began.
    if (span === 0 || !c.HttpServer.enabled) {
      if (acrossAwait && requestSpanEntered && currentSpanId() !== context) enterSpan(context);
      return;
    }
    // A request begun inside a span (a server listening in one) has a root not known here, unless its
    // caller named the trace: 0, so that no request of the connection inherits another's trace.
    if (propagate) enterTrace(incoming !== undefined || context === 0 ? span : 0, incoming);
    if (acrossAwait) {
      requestSpanEntered = true;
      enterSpan(span);
    } else enterSpanSynchronously(span);
  },
  'http.server.response.finish': (m) => {
    const { request, response, socket } = m as { request: IncomingMessage; response: ServerResponse; socket: Socket };
    const state = serverSockets.get(socket);
    if (state === undefined || state.inFlight === 0) return;
    const started = state.firstMs;
    const span = state.firstSpan;
    if (--state.inFlight > 0) {
      state.firstMs = state.more!.shift()!;
      state.firstSpan = state.more!.shift()!;
    }
    const written = bytesWrittenBy(socket, state);
    const bytes = written - state.writtenMark;
    state.writtenMark = written;
    if (span === SAMPLED_OUT) return;
    const t = now();
    const c = nodeChannels;
    if (c.HttpServerRequest.enabled) c.HttpServerRequest.writeAt(t, request.method ?? '', request.url ?? '', response.statusCode, bytes, elapsedMs(started, t));
    if (span !== 0 && c.HttpServer.enabled) c.HttpServer.endType.writeAt(t, span, false, '', response.statusCode, bytes);
  },
  'http.client.request.start': (m) => {
    const { request } = m as { request: ClientRequest };
    // Published in the caller's context: the current span is the request's parent.
    if (currentSpanId() === SAMPLED_OUT) return;
    // Begun already where Node told of it as it was created (propagate=w3c).
    if (propagate && RequestState.get(request) !== undefined) return;
    RequestState.track(request, nodeChannels.HttpClient.enabled ? nodeChannels.HttpClient.begin(request.method, request.host, request.path) : 0);
  },
  'http.client.response.finish': (m) => {
    const { request, response } = m as { request: ClientRequest; response: IncomingMessage };
    const r = RequestState.take(request);
    if (r === undefined) return;
    const status = response.statusCode ?? 0;
    const bytes = contentLength(response.headers['content-length']);
    const c = nodeChannels;
    if (c.HttpClientRequest.enabled) c.HttpClientRequest.write(request.method, request.host, request.path, status, bytes, elapsedMs(r.started, now()), '');
    c.HttpClient.end(r.span, status, bytes);
  },
  'http.client.request.error': (m) => {
    const { request, error } = m as { request: ClientRequest; error: Error };
    const r = RequestState.take(request);
    if (r === undefined) return;
    const c = nodeChannels;
    if (c.HttpClientRequest.enabled) c.HttpClientRequest.write(request.method, request.host, request.path, 0, -1, elapsedMs(r.started, now()), String(error?.message ?? error));
    c.HttpClient.fail(r.span, error);
  },
};

/**
 * propagate=w3c on http.request: Node 24 (and the Node 22 and 23 releases that have it) tells of a
 * client request as it is created, before its headers are built, so the span begins there and the
 * header can be set. Node 20 tells of it only once its headers are on their way
 * (`http.client.request.start`): there http.request carries no traceparent (docs/PROVIDERS.md).
 */
const httpCreated: Record<string, Handler> = {
  'http.client.request.created': (m) => {
    const { request } = m as { request: ClientRequest };
    const sampledOut = currentSpanId() === SAMPLED_OUT;
    const span = sampledOut || !nodeChannels.HttpClient.enabled ? 0 : nodeChannels.HttpClient.begin(request.method, request.host, request.path);
    if (!sampledOut) RequestState.track(request, span);
    if (request.headersSent || request.getHeader('traceparent') !== undefined) return;
    const ctx = outgoingContext(span);
    if (ctx === undefined) return;
    request.setHeader('traceparent', ctx.traceparent);
    if (ctx.tracestate !== '') request.setHeader('tracestate', ctx.tracestate);
  },
};

interface UndiciRequest {
  readonly method: string;
  readonly origin: string;
  readonly path: string;
  /** Name, value, name, value… (the undici of Node 20.20 and 24); older undici: `name: value\r\n` lines. */
  readonly headers: readonly string[] | string;
  addHeader(name: string, value: string): unknown;
}

/** propagate=w3c: a fetch's traceparent (its span `span`), unless the application set one. */
function propagateToFetch(request: UndiciRequest, span: number): void {
  if (fetchHasTraceparent(request.headers)) return;
  const ctx = outgoingContext(span);
  if (ctx === undefined) return;
  request.addHeader('traceparent', ctx.traceparent);
  if (ctx.tracestate !== '') request.addHeader('tracestate', ctx.tracestate);
}

function fetchHasTraceparent(headers: readonly string[] | string): boolean {
  if (typeof headers === 'string') return /(^|\n)traceparent:/i.test(headers);
  for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'traceparent') return true;
  return false;
}

function undiciEnd(request: UndiciRequest, error: Error | undefined): void {
  const r = RequestState.take(request);
  if (r === undefined) return;
  const c = nodeChannels;
  if (c.UndiciRequest.enabled) c.UndiciRequest.write(request.method, String(request.origin), request.path, r.status, r.bytes, elapsedMs(r.started, now()), error === undefined ? '' : String(error?.message ?? error));
  if (error === undefined) c.Fetch.end(r.span, r.status, r.bytes);
  else c.Fetch.fail(r.span, error);
}

const undici: Record<string, Handler> = {
  'undici:request:create': (m) => {
    const { request } = m as { request: UndiciRequest };
    // Published as fetch() builds the request, in the caller's async context: its span is the parent.
    const current = currentSpanId();
    if (current === SAMPLED_OUT && !propagate) return;
    const span = current === SAMPLED_OUT || !nodeChannels.Fetch.enabled ? 0 : nodeChannels.Fetch.begin(request.method, String(request.origin), request.path);
    if (propagate) propagateToFetch(request, span);
    if (current !== SAMPLED_OUT) RequestState.track(request, span);
  },
  'undici:request:headers': (m) => {
    const { request, response } = m as { request: UndiciRequest; response: { statusCode: number; headers: readonly (Buffer | string)[] } };
    const r = RequestState.get(request);
    if (r === undefined) return;
    r.status = response.statusCode;
    const h = response.headers;
    for (let i = 0; i + 1 < h.length; i += 2) {
      if (String(h[i]).toLowerCase() === 'content-length') r.bytes = contentLength(String(h[i + 1]));
    }
  },
  'undici:request:trailers': (m) => undiciEnd((m as { request: UndiciRequest }).request, undefined),
  'undici:request:error': (m) => {
    const { request, error } = m as { request: UndiciRequest; error: Error };
    undiciEnd(request, error);
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
      nodeChannels.NetSocket.write(side, address ?? '', port ?? 0, socket.bytesRead, socket.bytesWritten, elapsedMs(t, now()));
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

const tracing = new TracingChannelBridge(() => nodeChannels.TracingChannel);

/** propagate=w3c in some session: outgoing requests carry traceparent. */
let propagate = false;
/** context=sync in every session: the request span is current only in the handler's synchronous run. */
let acrossAwait = true;
/**
 * Whether a request's span was ever made current across await (below). Until one was, nothing has
 * moved a connection's context away from where it began, and a request without a span of its own
 * need not ask for the current span to put it back (an AsyncLocalStorage read a request).
 */
let requestSpanEntered = false;
/** The fraction of root requests kept (sample=, TRACEPIPE_SAMPLE): the largest any session asked for. */
let sampleRate = 1;
/** Server requests seen and kept by head sampling since the process began; each session's share is its difference. */
let requestsSeen = 0;
let requestsKept = 0;
const countsAtEnable = new Map<number, { seen: number; kept: number }>();

// Subscribed only while a session wants the events (seed 000): Node skips publishing to a channel
// nobody listens to, so the bridge costs nothing otherwise.
const sessions = new ProviderSessions('Node.Channels', (s) => {
  const c = nodeChannels;
  const on = s.size > 0;
  toggle(http, on && (c.HttpServerRequest.enabled || c.HttpClientRequest.enabled || c.HttpServer.enabled || c.HttpClient.enabled));
  toggle(undici, on && (c.UndiciRequest.enabled || c.Fetch.enabled));
  toggle(net, on && c.NetSocket.enabled);
  tracing.set(on && c.TracingChannel.enabled ? s.listed('tracing') : new Set());
  acrossAwait = s.notAllSay('context', 'sync', ['sync', 'async']);
  propagate = on && s.someSays('propagate', 'w3c', ['w3c', 'none']);
  toggle(httpCreated, propagate && (c.HttpClient.enabled || c.HttpClientRequest.enabled));
  sampleRate = s.largestNumber('sample', 1, 0, 1, process.env.TRACEPIPE_SAMPLE);
});

/**
 * What head sampling kept, written into the session as it begins (the rate) and as it stops (the
 * requests it saw and kept), so that `report` and `explain` can say their counts are a sample.
 */
function writeSampling(ctx: EnableContext, ending: boolean): void {
  const c = nodeChannels;
  if (ending) {
    const at = countsAtEnable.get(ctx.sessionId);
    countsAtEnable.delete(ctx.sessionId);
    if (at !== undefined && c.RequestSampling.enabled && sampleRate < 1) c.RequestSampling.write(sampleRate, requestsSeen - at.seen, requestsKept - at.kept);
  } else {
    countsAtEnable.set(ctx.sessionId, { seen: requestsSeen, kept: requestsKept });
    if (c.RequestSampling.enabled && sampleRate < 1) c.RequestSampling.write(sampleRate, 0, 0);
  }
}

// What nodeChannels does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/channels.ts).
attachCallbacks(nodeChannels, {
  onEnable: (ctx) => {
    sessions.onEnable(ctx);
    writeSampling(ctx, false);
  },
  onDisable: (ctx) => {
    writeSampling(ctx, true);
    sessions.onDisable(ctx);
  },
});
