// A local OTLP/HTTP receiver for tests: takes gzip'd protobuf (or JSON) requests on /v1/traces,
// /v1/metrics and /v1/logs and decodes them with OpenTelemetry's own definitions (otlp-decode.mjs).
// `answer(req)` may return a status (503: retry later) or a delay before answering.
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { decodeRequest } from './otlp-decode.mjs';

export async function startReceiver({ answer = () => ({ status: 200 }) } = {}) {
  const received = { traces: [], metrics: [], logs: [] };
  const attempts = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const signal = req.url.replace('/v1/', '');
      const n = attempts.push({ signal, headers: req.headers, body: Buffer.concat(chunks) });
      const { status = 200, delayMs = 0 } = answer({ signal, n, headers: req.headers }) ?? {};
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (status === 200) {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        received[signal].push(req.headers['content-type'] === 'application/json' ? JSON.parse(body) : decodeRequest(signal, body));
      }
      res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    received,
    attempts,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}
