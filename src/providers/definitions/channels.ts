import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Node.Channels`: Node's built-in diagnostics_channel messages (http, undici/fetch, net) as events;
 * the same requests as spans with parents (keyword `spans`); and any TracingChannel a session names
 * in `tracing=name,name` as spans (keyword `tracing`). `sample=0.1` (or TRACEPIPE_SAMPLE) keeps that
 * fraction of served requests with everything under them; `context=sync` keeps a served request's
 * span current only in its handler's synchronous run; `propagate=w3c` writes `traceparent` on
 * outgoing requests (docs/PROVIDERS.md, "Node.Channels").
 */
export const nodeChannels = defineBuiltinProvider('Node.Channels', {
  keywords: { http: 0x1n, undici: 0x2n, net: 0x4n, tracing: 0x8n, spans: 0x10n },
  events: {
    HttpServerRequest: {
      id: 1,
      level: Level.Informational,
      keywords: ['http'],
      fields: [['method', 'string'], ['url', 'string'], ['status', 'u16'], ['bytes', 'f64'], ['durationMs', 'f64']],
      doc: 'An http server request, written when its response finished; bytes were written to the socket for it. Not to a session that records the HttpServer span, which has the same fields.',
      // A served request recorded once: its cost and its bytes paid once (BENCHMARKS.md §6, issue 29).
      replacedBy: 'HttpServer',
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
    RequestSampling: {
      id: 5,
      level: Level.Informational,
      keywords: ['http', 'spans'],
      fields: [['rate', 'f64'], ['requests', 'f64'], ['kept', 'f64']],
      doc: 'Head sampling (sample=rate): written as a session begins (requests and kept 0) and as it stops (the server requests it saw, and those kept whole with their children).',
    },
    TraceContext: {
      id: 6,
      level: Level.Informational,
      keywords: ['spans'],
      fields: [['spanId', 'u64'], ['traceId', 'string'], ['parentId', 'string'], ['flags', 'u8'], ['traceState', 'string']],
      doc: "The W3C trace context (traceparent, tracestate) a served request came with, for its HttpServer span spanId: the OTLP export gives that span the caller's trace id and parent (parentId, the caller's span), and its children the same trace id.",
    },
  },
  spans: {
    HttpServer: {
      id: 10,
      level: Level.Informational,
      keywords: ['spans'],
      fields: [['method', 'string'], ['url', 'string']],
      endFields: [['status', 'u16'], ['bytes', 'f64']],
      doc: "An http server request, from its start to its response's finish; current in the request handler, so what the handler does is its child.",
    },
    HttpClient: {
      id: 11,
      level: Level.Informational,
      keywords: ['spans'],
      fields: [['method', 'string'], ['host', 'string'], ['path', 'string']],
      endFields: [['status', 'u16'], ['bytes', 'f64']],
      doc: 'An http client request, from its start until the response headers arrived (bytes: content-length, -1 if unknown) or it failed.',
    },
    Fetch: {
      id: 12,
      level: Level.Informational,
      keywords: ['spans'],
      fields: [['method', 'string'], ['origin', 'string'], ['path', 'string']],
      endFields: [['status', 'u16'], ['bytes', 'f64']],
      doc: 'An undici request (fetch), from its creation until its body ended or it failed.',
    },
    TracingChannel: {
      id: 13,
      level: Level.Informational,
      keywords: ['tracing'],
      fields: [['channel', 'string']],
      doc: 'One operation published on a TracingChannel the session named in tracing=...; current while its function runs.',
    },
  },
}, () => new URL('../channels-provider.js', import.meta.url).href);
