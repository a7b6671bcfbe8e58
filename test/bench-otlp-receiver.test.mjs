// The otlp benchmark's collector (bench/otlp/receiver.mjs) counts what it is sent: requests encoded
// with OpenTelemetry's own protobuf types, gzip'd or not, counted per service.name (spans, metric data
// points, log records, bytes), and a request it cannot take is reported, never ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { REQUEST_TYPES } from './helpers/otlp-decode.mjs';

const RECEIVER = fileURLToPath(new URL('../bench/otlp/receiver.mjs', import.meta.url));
const TIMEOUT_MS = 20_000;

const resource = (name) => ({ attributes: [{ key: 'service.name', value: { stringValue: name } }] });
const span = (n) => ({ traceId: Buffer.alloc(16, n + 1), spanId: Buffer.alloc(8, n + 1), name: `span ${n}`, startTimeUnixNano: 1, endTimeUnixNano: 2 });
const encode = (signal, request) => {
  const T = REQUEST_TYPES[signal];
  return Buffer.from(T.encode(T.fromObject(request)).finish());
};

async function post(url, body, headers) {
  const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  await res.arrayBuffer();
  return res.status;
}

test('the benchmark receiver counts spans, points and log records per service, and reports what it cannot decode', async (t) => {
  const child = fork(RECEIVER, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  t.after(() => child.kill('SIGKILL'));
  const reply = () => Promise.race([once(child, 'message').then(([m]) => m), new Promise((_, reject) => setTimeout(() => reject(new Error('the receiver did not answer')), TIMEOUT_MS).unref())]);
  const { port } = await reply();
  const url = (path) => `http://127.0.0.1:${port}${path}`;
  const protobuf = { 'content-type': 'application/x-protobuf' };

  const traces = encode('traces', {
    resourceSpans: [
      { resource: resource('a'), scopeSpans: [{ spans: [span(0), span(1)] }, { spans: [span(2)] }] },
      { resource: resource('b'), scopeSpans: [{ spans: [span(3), span(4)] }] },
    ],
  });
  const gzipped = gzipSync(traces);
  assert.equal(await post(url('/v1/traces'), gzipped, { ...protobuf, 'content-encoding': 'gzip' }), 200);
  const logs = encode('logs', { resourceLogs: [{ resource: resource('a'), scopeLogs: [{ logRecords: [{ timeUnixNano: 1 }, { timeUnixNano: 2 }, { timeUnixNano: 3 }, { timeUnixNano: 4 }] }] }] });
  assert.equal(await post(url('/v1/logs'), logs, protobuf), 200);
  const metrics = encode('metrics', { resourceMetrics: [{ resource: resource('b'), scopeMetrics: [{ metrics: [{ name: 'heap', gauge: { dataPoints: [{ asDouble: 1 }, { asDouble: 2 }] } }] }] }] });
  assert.equal(await post(url('/v1/metrics'), metrics, protobuf), 200);
  assert.equal(await post(url('/v1/traces'), '{}', { 'content-type': 'application/json' }), 415);
  assert.equal(await post(url('/v1/traces'), Buffer.from([0x0a, 0xff, 0xff, 0xff]), protobuf), 200);

  child.send('counts');
  const { services, problems } = await reply();
  assert.deepEqual(services, {
    a: { requests: 2, wireBytes: gzipped.length + logs.length, bodyBytes: traces.length + logs.length, spans: 3, points: 0, logRecords: 4 },
    b: { requests: 1, wireBytes: metrics.length, bodyBytes: metrics.length, spans: 2, points: 2, logRecords: 0 },
  });
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.match(problems[0], /not an OTLP\/HTTP protobuf request/);
  assert.match(problems[1], /4 bytes not decodable/);
});
