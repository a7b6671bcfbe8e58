// Decodes OTLP with the OpenTelemetry project's own generated protobuf definitions (the protobufjs
// root @opentelemetry/otlp-transformer 0.52 ships, installed as otlp-proto-root), never with
// tracepipe's encoder: requests as plain objects, 64-bit numbers as decimal strings, ids as hex.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('otlp-proto-root/build/src/generated/root.js');
const protobuf = require(require.resolve('protobufjs/minimal', { paths: [require.resolve('otlp-proto-root')] }));
const v1 = root.opentelemetry.proto.collector;

export const REQUEST_TYPES = {
  traces: v1.trace.v1.ExportTraceServiceRequest,
  metrics: v1.metrics.v1.ExportMetricsServiceRequest,
  logs: v1.logs.v1.ExportLogsServiceRequest,
};
const OBJECT = { longs: String, bytes: String, enums: Number, defaults: false };

/** One request body of `signal` as a plain object (bytes fields base64, turned into hex by `hexIds`). */
export function decodeRequest(signal, bytes) {
  const T = REQUEST_TYPES[signal];
  return T.toObject(T.decode(bytes), OBJECT);
}

/** An OTLP file of convert --to otlp: tagged, length-delimited requests (1 traces, 2 metrics, 3 logs). */
export function decodeOtlpFile(bytes) {
  const r = protobuf.Reader.create(bytes);
  const out = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    const signal = ['', 'traces', 'metrics', 'logs'][tag >>> 3];
    if (!signal || (tag & 7) !== 2) throw new Error(`unexpected tag ${tag} at ${r.pos}`);
    out.push({ signal, request: decodeRequest(signal, r.bytes()) });
  }
  return out;
}

export const b64hex = (s) => (s === undefined || s === '' ? undefined : Buffer.from(s, 'base64').toString('hex'));

/** An attribute list as an object; int values decimal strings, doubles numbers. */
export function attributesOf(list = []) {
  const out = {};
  for (const { key, value } of list) {
    const [kind, v] = Object.entries(value)[0];
    out[key] = kind === 'bytesValue' ? b64hex(v) : v;
  }
  return out;
}

/** Every span of some trace requests, flattened with its resource and scope. */
export function spansOf(requests) {
  const spans = [];
  for (const req of requests) {
    for (const rs of req.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({ ...s, scope: ss.scope?.name, resource: attributesOf(rs.resource?.attributes), traceId: b64hex(s.traceId), spanId: b64hex(s.spanId), parentSpanId: b64hex(s.parentSpanId), attrs: attributesOf(s.attributes) });
        }
      }
    }
  }
  return spans;
}
