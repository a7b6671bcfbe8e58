// `tracepipe collect --pid N --profile all --duration ...` against a real framework server from npm
// (fastify) under load, as a user traces a production server: every request the server says it
// served is one Node.Channels/HttpServer span (the profile records spans, so no HttpServerRequest event
// repeats it), with the exact bytes the client received for
// it on the wire, and nothing is dropped. The client speaks HTTP/1.1 over raw sockets, so the bytes it
// counts are independent of Node's http stack; one connection pipelines its requests.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventRole, processInfo, readTrace } from '../dist/index.js';
import { startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const FASTIFY = fileURLToPath(new URL('./fixtures/fastify-server.mjs', import.meta.url));
const CONNECTIONS = 8;
const REQUESTS_PER_CONNECTION = 40;
const PIPELINED_BATCHES = 8;
const PIPELINE_DEPTH = 5;

const dir = await useTmpdir(after);

/** One response parsed off the front of `buf`, or undefined until all of it arrived; `bytes` is its size on the wire. */
function parseResponse(buf) {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...headerLines] = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let at = headEnd + 4;
  const body = [];
  if (headers['transfer-encoding'] === 'chunked') {
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
      if (buf.length < eol + 2 + size + 2) return undefined;
      body.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
      if (size === 0) break;
    }
  } else {
    const length = Number(headers['content-length']);
    if (buf.length < at + length) return undefined;
    body.push(buf.subarray(at, at + length));
    at += length;
  }
  return { status: Number(statusLine.split(' ')[1]), body: Buffer.concat(body).toString('utf8'), bytes: at };
}

/** A keep-alive HTTP/1.1 connection over a raw socket; `send` writes requests at once (pipelined when several) and resolves to their responses. */
async function rawConnection(port) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let buf = Buffer.alloc(0);
  const waiting = [];
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (let r; waiting.length > 0 && (r = parseResponse(buf)); ) {
      buf = buf.subarray(r.bytes);
      waiting.shift().resolve(r);
    }
  });
  socket.on('error', (e) => waiting.splice(0).forEach((w) => w.reject(e)));
  socket.on('close', () => waiting.splice(0).forEach((w) => w.reject(new Error('the server closed the connection'))));
  return {
    localPort: socket.localPort,
    send(requests) {
      const answers = requests.map(() => new Promise((resolve, reject) => waiting.push({ resolve, reject })));
      socket.write(requests.map((q) => q.text).join(''));
      return Promise.all(answers);
    },
    async close() {
      socket.end();
      if (!socket.destroyed) await once(socket, 'close');
      return { bytesRead: socket.bytesRead, bytesWritten: socket.bytesWritten };
    },
  };
}

/** Request number `i` of connection `c`: a mix of routes and sizes; the query makes every url unique. */
function request(c, i) {
  const tag = `r=${c}-${i}`;
  const n = (c * 7 + i * 13) % 50;
  const get = (path) => ({ method: 'GET', url: `${path}?${tag}`, text: `GET ${path}?${tag} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` });
  switch ((c + i) % 4) {
    case 0:
      return { ...get(`/items/${n}`), expect: (body) => JSON.parse(body).items.length === n };
    case 1: {
      const text = 'x'.repeat(n * 11);
      const url = `/echo?${tag}`;
      const raw = `POST ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
      return { method: 'POST', url, text: raw, expect: (body) => JSON.parse(body).received === text.length };
    }
    case 2:
      return { ...get(`/stream/${n}`), expect: (body) => body.split('\n').length === n + 1 };
    default:
      return { ...get(`/missing/${n}`), expectStatus: 404, expect: (body) => JSON.parse(body).statusCode === 404 };
  }
}

/** The load: CONNECTIONS keep-alive connections at once, each sending its requests back to back, plus one pipelining. */
async function load(port) {
  const plans = Array.from({ length: CONNECTIONS }, (_, c) => Array.from({ length: REQUESTS_PER_CONNECTION }, (_, i) => [request(c, i)]));
  plans.push(Array.from({ length: PIPELINED_BATCHES }, (_, b) => Array.from({ length: PIPELINE_DEPTH }, (_, k) => request(CONNECTIONS, b * PIPELINE_DEPTH + k))));
  const connections = await Promise.all(
    plans.map(async (batches) => {
      const conn = await rawConnection(port);
      const responses = [];
      for (const batch of batches) {
        const answers = await conn.send(batch);
        answers.forEach((a, k) => responses.push({ ...batch[k], ...a }));
      }
      return { localPort: conn.localPort, responses, ...(await conn.close()) };
    }),
  );
  for (const r of connections.flatMap((c) => c.responses)) {
    assert.equal(r.status, r.expectStatus ?? 200, `${r.method} ${r.url}`);
    assert.ok(r.expect(r.body), `${r.method} ${r.url}: unexpected body ${r.body.slice(0, 200)}`);
  }
  return connections;
}

test('collect --profile all --duration against a fastify server under load: one HttpServer span per request served, exact bytes, nothing dropped', async (t) => {
  const server = await startTarget(t, dir, { script: FASTIFY });
  const port = Number(server.ready.split(' ')[1]);
  const file = join(dir, 'fastify.tptrace');
  const cli = startCli(t, dir, ['collect', '--pid', String(server.pid), '--profile', 'all', '--duration', '8s', '-o', file]);
  await waitFor('the session to run', async () => (await processInfo(server.pid)).sessions.length === 1);

  const connections = await load(port);
  // The server closes its side of each connection too, and writes Node.Channels/NetSocket as it does.
  await waitFor('the server to close every connection', async () => JSON.parse(await server.ask('report')).open === 0);
  const { served } = JSON.parse(await server.ask('report'));
  // Every request is inside the session only if the load ended before --duration did; on a machine
  // too slow for that, say so instead of miscounting.
  assert.equal((await processInfo(server.pid)).sessions.length, 1, 'the load outlasted --duration: the session ended before it');

  const r = await cli.done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /stops after 8\.0 s/);
  assert.match(r.stdout, /\n {2}[\d,]+ events, 0 dropped/);
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true, s.error?.message);
  assert.equal(s.dropped, 0);
  assert.match(s.header.session.providers, /Node\.Channels/);

  const requests = new Map();
  const begun = new Map();
  const sockets = new Map();
  for await (const e of readTrace(file)) {
    if (e.provider !== 'Node.Channels') continue;
    assert.notEqual(e.name, 'HttpServerRequest', 'the span is the request: no duplicate event');
    const role = eventRole(e);
    if (role?.span === 'HttpServer' && role.kind === 'span-begin') begun.set(e.fields.spanId, e.fields);
    else if (role?.span === 'HttpServer' && role.kind === 'span-end') {
      assert.ok(begun.has(e.fields.spanId), `span ${e.fields.spanId} ends without its begin`);
      const { method, url } = begun.get(e.fields.spanId);
      assert.equal(requests.has(url), false, `two spans for ${url}`);
      requests.set(url, { method, status: e.fields.status, bytes: e.fields.bytes });
    } else if (e.name === 'NetSocket' && e.fields.side === 'server') sockets.set(e.fields.remotePort, e.fields);
  }

  // Counted on the server (fastify's onResponse hook) and on the client: the same requests.
  const sent = connections.flatMap((c) => c.responses);
  assert.equal(sent.length, CONNECTIONS * REQUESTS_PER_CONNECTION + PIPELINED_BATCHES * PIPELINE_DEPTH);
  assert.deepEqual(served.map((q) => `${q.method} ${q.url} ${q.status}`).sort(), sent.map((q) => `${q.method} ${q.url} ${q.status}`).sort());
  // One span per request served, with its method, status and the exact bytes that reached the client.
  assert.equal(requests.size, served.length);
  for (const q of sent) {
    const e = requests.get(q.url);
    assert.ok(e, `no HttpServer span for ${q.method} ${q.url}`);
    assert.deepEqual({ method: e.method, status: e.status, bytes: e.bytes }, { method: q.method, status: q.status, bytes: q.bytes }, q.url);
  }
  // Each connection's server socket: every byte the client sent and received.
  for (const c of connections) {
    const e = sockets.get(c.localPort);
    assert.ok(e, `no NetSocket for the connection from port ${c.localPort}`);
    assert.deepEqual({ bytesRead: e.bytesRead, bytesWritten: e.bytesWritten }, { bytesRead: c.bytesWritten, bytesWritten: c.bytesRead }, `connection from port ${c.localPort}`);
  }
});
