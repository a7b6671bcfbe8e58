// The variants of the pinned HTTP server that issue 29 splits a traced request's cost into, shared by the
// benchmark that times them (http-overhead) and the one that counts their instructions (http-instructions):
// each adds one part of the cost to the one before it.
export const TARGET_OTEL_RATIO = 15;
export const TARGET_EVENT_US = 1;
export const RUNTIME = 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process';
// A served request is recorded once: as its request event, or (where the session records spans) as its span.
export const HTTP_EVENT = 'Node.Channels/HttpServerRequest';
export const HTTP_SPAN_END = 'Node.Channels/HttpServer.End';

export const OFF = 0;
export const HOOKS = 1;
export const EVENT = 2;
export const SPANS = 3;
export const CHANNELS = 4;
export const FULL = 5;
export const OTEL = 6;
export const VARIANTS = [
  { name: 'off', server: 'plain' },
  { name: "Node's hooks, empty handlers", server: 'node-hooks' },
  { name: 'request event alone (0x1)', server: 'plain', providers: 'Node.Channels:0x1' },
  { name: '+ span events, context=sync', server: 'plain', providers: 'Node.Channels:0x11:5:context=sync' },
  { name: '+ context across await (Node.Channels)', server: 'plain', providers: 'Node.Channels' },
  { name: '+ Runtime.*', server: 'plain', providers: `${RUNTIME},Node.Channels` },
  { name: 'OpenTelemetry http, BatchSpanProcessor', server: 'opentelemetry' },
];
/** Each part: what one variant adds to the one before it (in the same round). */
export const PARTS = [
  { name: "Node's hooks with empty handlers", of: HOOKS, over: OFF },
  { name: 'the request event', of: EVENT, over: HOOKS },
  { name: "the span's two events instead of the event (current in the handler)", of: SPANS, over: EVENT },
  { name: 'the span context across await', of: CHANNELS, over: SPANS },
  { name: 'Runtime.* on top', of: FULL, over: CHANNELS },
  { name: 'all of Node.Channels with spans', of: CHANNELS, over: OFF },
  { name: 'OpenTelemetry', of: OTEL, over: OFF },
];

/** What a stopped server of `variant` served, and what its tracer recorded. */
export async function finishServer(variant, server, traceFile) {
  const { served, handled, spans } = await server.stop();
  if (!variant.providers) return { served, handled, spans: spans?.exported };
  const { readTrace } = await import('../../dist/index.js');
  const s = await readTrace(traceFile).summary();
  if (!s.complete) throw new Error(`${traceFile}: incomplete trace (${s.error?.message})`);
  return { served, httpEvents: (s.byEvent[HTTP_EVENT] ?? 0) + (s.byEvent[HTTP_SPAN_END] ?? 0), events: s.events, dropped: s.dropped };
}

/** Every request recorded once (its event or its span) and nothing dropped, for each traced variant; one span per request for OpenTelemetry's. */
export function countChecks(node, results) {
  const checks = [];
  const total = (i, f) => results[i].reduce((a, res) => a + f(res), 0);
  for (const [i, v] of VARIANTS.entries()) {
    if (!v.providers) continue;
    const exact = results[i].every((res) => res.httpEvents === res.served && res.dropped === 0);
    console.log(`  ${v.name}: ${total(i, (res) => res.httpEvents)} ${HTTP_EVENT} events or ${HTTP_SPAN_END} for ${total(i, (res) => res.served)} requests served; ${total(i, (res) => res.events)} events, ${total(i, (res) => res.dropped)} dropped`);
    checks.push({ check: `Node ${node.version}, ${v.name}: one ${HTTP_EVENT} or HttpServer span per request served, none dropped`, value: exact ? 'exact' : 'not exact', target: 'exact in every round', met: exact });
  }
  // OpenTelemetry also ends the span of a request whose connection closed before its response finished.
  const spansExact = results[OTEL].every((res) => res.spans >= res.served && res.spans <= res.handled);
  console.log(`  OpenTelemetry: ${total(OTEL, (res) => res.spans)} spans serialised for ${total(OTEL, (res) => res.served)} requests served`);
  checks.push({ check: `Node ${node.version}, OpenTelemetry: one span exported per request served (or handled, answered or not)`, value: spansExact ? 'exact' : 'not exact', target: 'exact in every round', met: spansExact });
  return checks;
}
