// The otlp benchmark's collector: one process for the whole run (pinned with the load generator) that
// takes OTLP/HTTP protobuf requests (gzip'd or not) on /v1/traces, /v1/metrics and /v1/logs, answers
// 200 at once, then decodes them with the OpenTelemetry project's own protobuf definitions
// (test/helpers/otlp-decode.mjs, never tracepipe's encoder) and counts per service.name: requests,
// bytes on the wire and decoded, spans, metric data points, log records. Over IPC it says its port,
// then answers every message with the counts so far. A request it cannot decode is counted, not ignored.
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { attributesOf, decodeRequest } from '../../test/helpers/otlp-decode.mjs';

const SIGNALS = { '/v1/traces': 'traces', '/v1/metrics': 'metrics', '/v1/logs': 'logs' };
const services = {};
const problems = [];

const serviceOf = (resource) => attributesOf(resource?.attributes)['service.name'] ?? '(none)';
const countsOf = (name) => (services[name] ??= { requests: 0, wireBytes: 0, bodyBytes: 0, spans: 0, points: 0, logRecords: 0 });

/** The items of one decoded request, added to its services' counts. */
function count(signal, request, wireBytes, bodyBytes) {
  const groups = request.resourceSpans ?? request.resourceMetrics ?? request.resourceLogs ?? [];
  // A request's bytes go to its first service: every sender here sends one service per request.
  const first = countsOf(serviceOf(groups[0]?.resource));
  first.requests++;
  first.wireBytes += wireBytes;
  first.bodyBytes += bodyBytes;
  for (const g of groups) {
    const c = countsOf(serviceOf(g.resource));
    if (signal === 'traces') for (const s of g.scopeSpans ?? []) c.spans += s.spans?.length ?? 0;
    if (signal === 'logs') for (const s of g.scopeLogs ?? []) c.logRecords += s.logRecords?.length ?? 0;
    if (signal === 'metrics') {
      for (const s of g.scopeMetrics ?? []) for (const m of s.metrics ?? []) c.points += Object.values(m).find((v) => Array.isArray(v?.dataPoints))?.dataPoints.length ?? 0;
    }
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const signal = SIGNALS[req.url];
    const protobuf = req.headers['content-type'] === 'application/x-protobuf';
    res.writeHead(signal && protobuf ? 200 : 415, { 'content-type': 'application/x-protobuf' }).end();
    if (!signal || !protobuf) return void problems.push(`${req.method} ${req.url} (${req.headers['content-type']}): not an OTLP/HTTP protobuf request`);
    // Decoded once the answer is on its way: the sender waits for nothing of this.
    setImmediate(() => {
      const wire = Buffer.concat(chunks);
      try {
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire;
        count(signal, decodeRequest(signal, body), wire.length, body.length);
      } catch (e) {
        problems.push(`${req.url}: ${wire.length} bytes not decodable (${e.message})`);
      }
    });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => process.send({ services, problems }));
process.on('disconnect', () => {
  server.close();
  server.closeAllConnections();
});
