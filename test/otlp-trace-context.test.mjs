// W3C trace context across services (issue 28): two processes, each traced by its own startup session
// exporting live OTLP to one local receiver that decodes with OpenTelemetry's own definitions. A serves
// a request and calls B; B's server span is the child of A's client span, in one trace, on the wire
// and in `convert --to otlp` of each service's trace file. Node.Channels reads traceparent/tracestate
// on requests it serves (malformed ones ignored, as W3C says) and, with propagate=w3c only, writes
// them on outgoing fetch and http.request (where Node tells of a request before its headers are built).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cli } from './helpers/convert-helpers.mjs';
import { decodeOtlpFile, spansOf } from './helpers/otlp-decode.mjs';
import { startReceiver } from './helpers/otlp-receiver.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const SERVICE = fileURLToPath(new URL('./fixtures/otlp-service.mjs', import.meta.url));
const REGISTER = fileURLToPath(new URL('../dist/register.js', import.meta.url));
const PROPAGATE = 'Node.Channels:0x10:5:propagate=w3c';
const WAIT_MS = 30_000;
const SERVER = 2;
const CLIENT = 3;

const bounded = (promise, what) => {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

/** A service process under its own startup session; `stop()` ends it (its session flushes the file and the export). */
async function startService(t, name, { args = [], providers = PROPAGATE, receiver, env = {} } = {}) {
  const file = join(await tempDir(t), `${name}.tptrace`);
  const otlp = receiver ? { TRACEPIPE_OTLP_ENDPOINT: receiver.url } : {};
  const child = spawn(process.execPath, [`--import=${REGISTER}`, SERVICE, ...args], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: providers, TRACEPIPE_OUTPUT: file, TRACEPIPE_SERVICE_NAME: name, ...otlp, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  const first = await bounded(createInterface({ input: child.stdout })[Symbol.asyncIterator]().next(), `${name} to start`);
  assert.match(first.value ?? '', /^\d+$/);
  return {
    url: `http://127.0.0.1:${first.value}/`,
    file,
    stop: async () => {
      child.stdin.end();
      const [code] = await bounded(once(child, 'close'), `${name} to exit`);
      assert.equal(code, 0);
    },
  };
}

/** GET `url` with raw header pairs (several of one name allowed); the body. */
function get(url, headers = []) {
  return bounded(
    new Promise((resolve, reject) => {
      // Raw pairs leave Node to add nothing: the Host header HTTP/1.1 asks for is ours to give.
      const r = request(url, { headers: ['host', new URL(url).host, ...headers] }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url}: ${res.statusCode}`))));
      });
      r.on('error', reject);
      r.end();
    }),
    `GET ${url}`,
  );
}

/** The spans of `convert --to otlp` of a trace file. */
async function offlineSpans(file) {
  const c = await cli(['convert', file, '--to', 'otlp', '-q', '-o', `${file}.otlp`]);
  assert.equal(c.code, 0, c.stderr);
  return spansOf(decodeOtlpFile(await readFile(`${file}.otlp`)).filter((o) => o.signal === 'traces').map((o) => o.request));
}

const ids = (s) => ({ name: s.name, kind: s.kind, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, traceState: s.traceState });
const byId = (a, b) => a.spanId.localeCompare(b.spanId);

/** One span of `service` named `name`. */
function one(spans, service, name) {
  const found = spans.filter((s) => s.resource['service.name'] === service && s.name === name);
  assert.equal(found.length, 1, `${service} ${name}: ${JSON.stringify(found.map(ids))}`);
  return found[0];
}

/** Each service's spans as exported live equal, ids and all, those of converting its own file. */
async function assertOfflineSameIds(live, services) {
  for (const { name, file } of services) {
    const fromFile = (await offlineSpans(file)).map(ids).sort(byId);
    assert.deepEqual(live.filter((s) => s.resource['service.name'] === name).map(ids).sort(byId), fromFile, name);
  }
}

/** Whether this Node tells of an http client request as it is created (before its headers are built). */
function nodeTellsOfCreatedRequests() {
  let told = false;
  const created = channel('http.client.request.created');
  const seen = () => (told = true);
  created.subscribe(seen);
  const r = request('http://127.0.0.1:9/');
  r.on('error', () => {});
  r.destroy();
  created.unsubscribe(seen);
  return told;
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

test('two services through fetch: the caller’s trace id in both, B’s server span a child of A’s Fetch span, tracestate passed on; the same ids from each trace file', { timeout: 120_000 }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const b = await startService(t, 'svc-b', { receiver });
  const a = await startService(t, 'svc-a', { args: ['fetch', b.url], receiver });
  const seenByB = JSON.parse(await get(a.url, ['traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'tracestate', 'vendor=1']));
  await a.stop();
  await b.stop();

  const live = spansOf(receiver.received.traces);
  const aServer = one(live, 'svc-a', 'HttpServer');
  const aFetch = one(live, 'svc-a', 'Fetch');
  const bServer = one(live, 'svc-b', 'HttpServer');
  assert.deepEqual(ids(aServer), { name: 'HttpServer', kind: SERVER, traceId: CALLER_TRACE, spanId: aServer.spanId, parentSpanId: CALLER_SPAN, traceState: 'vendor=1' });
  assert.deepEqual(ids(aFetch), { name: 'Fetch', kind: CLIENT, traceId: CALLER_TRACE, spanId: aFetch.spanId, parentSpanId: aServer.spanId, traceState: 'vendor=1' });
  assert.deepEqual(ids(bServer), { name: 'HttpServer', kind: SERVER, traceId: CALLER_TRACE, spanId: bServer.spanId, parentSpanId: aFetch.spanId, traceState: 'vendor=1' });
  assert.deepEqual(seenByB, { traceparent: `00-${CALLER_TRACE}-${aFetch.spanId}-01`, tracestate: 'vendor=1' });
  await assertOfflineSameIds(live, [{ name: 'svc-a', file: a.file }, { name: 'svc-b', file: b.file }]);
});

test('two services through http.request: one trace begun by A, B’s server span a child of A’s HttpClient span, where Node tells of a request before its headers (Node 20 does not: no header)', { timeout: 120_000 }, async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const b = await startService(t, 'svc-b', { receiver });
  const a = await startService(t, 'svc-a', { args: ['http', b.url], receiver });
  const seenByB = JSON.parse(await get(a.url));
  await a.stop();
  await b.stop();

  const live = spansOf(receiver.received.traces);
  const aServer = one(live, 'svc-a', 'HttpServer');
  const aClient = one(live, 'svc-a', 'HttpClient');
  const bServer = one(live, 'svc-b', 'HttpServer');
  assert.equal(aServer.parentSpanId, undefined);
  assert.deepEqual(ids(aClient), { name: 'HttpClient', kind: CLIENT, traceId: aServer.traceId, spanId: aClient.spanId, parentSpanId: aServer.spanId, traceState: undefined });
  if (nodeTellsOfCreatedRequests()) {
    assert.deepEqual(ids(bServer), { name: 'HttpServer', kind: SERVER, traceId: aServer.traceId, spanId: bServer.spanId, parentSpanId: aClient.spanId, traceState: undefined });
    assert.deepEqual(seenByB, { traceparent: `00-${aServer.traceId}-${aClient.spanId}-01`, tracestate: null });
  } else {
    assert.deepEqual(seenByB, { traceparent: null, tracestate: null });
    assert.equal(bServer.parentSpanId, undefined);
    assert.notEqual(bServer.traceId, aServer.traceId);
  }
  await assertOfflineSameIds(live, [{ name: 'svc-a', file: a.file }, { name: 'svc-b', file: b.file }]);
});

test('a malformed traceparent is ignored as W3C says (the request is a root); a valid one of a later version is read', { timeout: 120_000 }, async (t) => {
  const b = await startService(t, 'svc-b');
  const T = CALLER_TRACE;
  const P = CALLER_SPAN;
  const cases = {
    valid: [`00-${T}-${P}-01`],
    later: [`01-${T}-${P}-01-what-comes-next`],
    short: [`00-${T.slice(1)}-${P}-01`],
    long: [`00-${T}-${P}-01-extra`],
    ff: [`ff-${T}-${P}-01`],
    zerotrace: [`00-${'0'.repeat(32)}-${P}-01`],
    zeroparent: [`00-${T}-${'0'.repeat(16)}-01`],
    upper: [`00-${T.toUpperCase()}-${P}-01`],
    nonhex: [`00-${T.slice(0, 31)}g-${P}-01`],
    two: [`00-${T}-${P}-01`, `00-${T}-${P}-01`],
  };
  for (const [name, values] of Object.entries(cases)) await get(`${b.url}${name}`, values.flatMap((v) => ['traceparent', v]));
  // Header names are case-insensitive.
  await get(`${b.url}named`, ['TraceParent', `00-${T}-${P}-01`]);
  await b.stop();

  const spans = await offlineSpans(b.file);
  const read = Object.fromEntries(spans.map((s) => [s.attrs.url.slice(1), s.parentSpanId === undefined ? 'root' : `${s.traceId}-${s.parentSpanId}`]));
  const expected = Object.fromEntries(Object.keys(cases).map((name) => [name, 'root']));
  Object.assign(expected, { valid: `${T}-${P}`, later: `${T}-${P}`, named: `${T}-${P}` });
  assert.deepEqual(read, expected);
  assert.ok(spans.filter((s) => s.parentSpanId === undefined).every((s) => s.traceId !== T));
});

test('propagation is opt-in, never replaces the application’s own traceparent, and a request head sampling left out sends flag 00', { timeout: 120_000 }, async (t) => {
  const b = await startService(t, 'svc-b');
  const off = await startService(t, 'svc-off', { args: ['fetch', b.url], providers: 'Node.Channels:0x10:5' });
  const own = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
  const owned = await startService(t, 'svc-own', { args: ['fetch', b.url], env: { OWN_TRACEPARENT: own } });
  const left = await startService(t, 'svc-sampled-out', { args: ['fetch', b.url], providers: `${PROPAGATE};sample=0` });
  const incomingLeft = await startService(t, 'svc-sampled-out-2', { args: ['fetch', b.url], providers: `${PROPAGATE};sample=0` });

  assert.deepEqual(JSON.parse(await get(off.url)), { traceparent: null, tracestate: null });
  assert.deepEqual(JSON.parse(await get(owned.url)), { traceparent: own, tracestate: null });
  assert.match(JSON.parse(await get(left.url)).traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  const kept = JSON.parse(await get(incomingLeft.url, ['traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'tracestate', 'vendor=2']));
  assert.match(kept.traceparent, new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-00$`));
  assert.equal(kept.tracestate, 'vendor=2');
  for (const s of [off, owned, left, incomingLeft, b]) await s.stop();
});
