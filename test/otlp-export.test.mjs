// Live OTLP/HTTP export from the drain thread, to a local receiver that decodes with OpenTelemetry's
// own definitions (helpers/otlp-receiver.mjs): the requests equal `convert --to otlp` of the file the
// same session wrote (same ids, same spans); and under faults (collector down from the start or
// mid-way, answering 503, slow, a full queue) the file is complete, the session stops, and every
// request is either sent or counted as dropped.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, run } from './helpers/convert-helpers.mjs';
import { attributesOf, decodeOtlpFile, spansOf } from './helpers/otlp-decode.mjs';
import { startReceiver } from './helpers/otlp-receiver.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/otlp-trace.mjs', import.meta.url));
let dir;
let n = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-otlp-live-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Runs the fixture exporting to `endpoint`; its session result, its file, and the file's own OTLP conversion. */
async function traced(endpoint, { rounds = 1, env = {} } = {}) {
  const file = join(dir, `live-${++n}.tptrace`);
  const r = await run(process.execPath, ['--expose-gc', FIXTURE, file, endpoint, String(rounds)], { timeoutMs: 60_000, env: { ...process.env, ...env } });
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout.trim().split('\n').pop());
  const c = await cli(['convert', file, '--to', 'otlp', '-q', '-o', `${file}.otlp`]);
  assert.equal(c.code, 0, c.stderr);
  const offline = decodeOtlpFile(await readFile(`${file}.otlp`));
  return { result, file, offline };
}

/** Spans, metrics and log records in some requests: what the export counts as items. */
function itemsOf(signal, request) {
  if (signal === 'traces') return request.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)).length;
  if (signal === 'metrics') return request.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)).length;
  return request.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords)).length;
}
/**
 * Spans and log records are exact across the two (each once); metrics are not: a metric is one item
 * per request that carries it, and the live export also flushes every second, so its requests cut
 * the stream elsewhere than the file's conversion does (more requests, or the same number cut at
 * other points: a metric seen on both sides of a cut of the file's may fall in one live request).
 * What holds is that each metric the file has goes out, or is dropped, at least once.
 */
const totalSpans = (offline) => offline.reduce((sum, { signal, request }) => sum + (signal === 'traces' ? itemsOf(signal, request) : 0), 0);
const leastItems = (offline) => {
  const metrics = new Set();
  let exact = 0;
  for (const { signal, request } of offline) {
    if (signal !== 'metrics') exact += itemsOf(signal, request);
    else for (const r of request.resourceMetrics) for (const s of r.scopeMetrics) for (const m of s.metrics) metrics.add(`${s.scope?.name}/${m.name}`);
  }
  return exact + metrics.size;
};

/** Every span of the file sent or dropped, and every log record and metric at least once. */
function assertAccounted(otlp, offline) {
  assert.equal(otlp.spansSent + otlp.spansDropped, totalSpans(offline));
  const least = leastItems(offline);
  assert.ok(otlp.itemsSent + otlp.itemsDropped >= least, `items sent ${otlp.itemsSent} + dropped ${otlp.itemsDropped} < ${least}`);
}

/**
 * What the metric requests carry, whatever requests they were cut into: every gauge point once, and
 * the GC pauses counted per kind (each flush's histogram holds the pauses since the last one).
 */
function metricPoints(requests) {
  const gauges = [];
  const pauses = {};
  for (const r of requests) {
    for (const s of r.resourceMetrics.flatMap((rm) => rm.scopeMetrics)) {
      for (const m of s.metrics) {
        for (const p of m.gauge?.dataPoints ?? []) gauges.push(`${s.scope?.name}/${m.name}@${p.timeUnixNano}=${p.asDouble ?? p.asInt}`);
        for (const p of m.histogram?.dataPoints ?? []) {
          const kind = attributesOf(p.attributes).kind;
          pauses[kind] = (pauses[kind] ?? 0) + Number(p.count);
        }
      }
    }
  }
  return { gauges: gauges.sort(), pauses };
}

/**
 * For the tests that need requests through: the fixture starts its work once the export's first
 * request has settled, so what the stop's 2 s must carry is the rest, through a sender already warm.
 */
const WARM = { OTLP_TEST_WARM: '1' };

const spanKey = (s) => JSON.stringify([s.traceId, s.spanId, s.parentSpanId, s.name, s.kind, s.startTimeUnixNano, s.endTimeUnixNano, s.attrs, s.status ?? {}, s.events ?? []]);

test('live export: the same spans, ids and timing as converting the file the session wrote, gzip protobuf, the resource named', async () => {
  const receiver = await startReceiver();
  try {
    const { result, offline } = await traced(receiver.url, { env: WARM });
    assert.equal(result.status, 'stopped');
    const live = spansOf(receiver.received.traces);
    const fromFile = spansOf(offline.filter((o) => o.signal === 'traces').map((o) => o.request));
    assert.ok(live.length >= 16);
    assert.deepEqual(live.map(spanKey).sort(), fromFile.map(spanKey).sort());
    assert.equal(live[0].resource['service.name'], 'otlp-test');
    assert.equal(live[0].resource['deployment.environment'], 'test');
    assert.ok(receiver.attempts.every((a) => a.headers['content-encoding'] === 'gzip' && a.headers['content-type'] === 'application/x-protobuf'));
    assert.ok(receiver.received.metrics.length > 0 && receiver.received.logs.length > 0);
    const received = Object.entries(receiver.received).reduce((sum, [signal, list]) => sum + list.reduce((n, req) => n + itemsOf(signal, req), 0), 0);
    assert.deepEqual(result.otlp, { requestsSent: receiver.attempts.length, itemsSent: received, requestsDropped: 0, itemsDropped: 0, spansSent: live.length, spansDropped: 0 });
    assertAccounted(result.otlp, offline);
    // Nothing was dropped, so the metrics and log records arrived whole: the file's, however cut.
    const fromFileOf = (signal) => offline.filter((o) => o.signal === signal).map((o) => o.request);
    assert.deepEqual(metricPoints(receiver.received.metrics), metricPoints(fromFileOf('metrics')));
    const logKeys = (requests) => requests.flatMap((r) => r.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords))).map((l) => JSON.stringify(l)).sort();
    assert.deepEqual(logKeys(receiver.received.logs), logKeys(fromFileOf('logs')));
  } finally {
    await receiver.close();
  }
});

test('503 and 429 answers are retried with backoff: everything arrives, nothing dropped', async () => {
  const receiver = await startReceiver({ answer: ({ n: i }) => ({ status: i <= 2 ? 503 : i === 3 ? 429 : 200 }) });
  try {
    const { result, offline } = await traced(receiver.url, { env: WARM });
    assert.equal(result.otlp.itemsDropped, 0);
    assert.equal(result.otlp.spansSent, totalSpans(offline));
    assertAccounted(result.otlp, offline);
    assert.equal(receiver.attempts.length, result.otlp.requestsSent + 3);
  } finally {
    await receiver.close();
  }
});

/** A local port nothing listens on. */
async function closedPort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

test('collector down from the start: the session stops, the file is complete, every item is counted as dropped', async () => {
  const { result, offline } = await traced(`http://127.0.0.1:${await closedPort()}`);
  assert.equal(result.status, 'stopped');
  assert.ok(spansOf(offline.filter((o) => o.signal === 'traces').map((o) => o.request)).length >= 16, 'the file holds every span');
  assert.equal(result.otlp.itemsSent, 0);
  assert.equal(result.otlp.spansDropped, totalSpans(offline));
  assertAccounted(result.otlp, offline);
});

test('the trace file holds the export\'s drops: a collector down from the start gives a file whose OTLP counts equal the session result\'s, shown by stats and report', async () => {
  const { result, file } = await traced(`http://127.0.0.1:${await closedPort()}`);
  assert.ok(result.otlp.spansDropped > 0);
  const stats = await cli(['stats', file, '--json', '-q']);
  assert.equal(stats.code, 0, stats.stderr);
  assert.deepEqual(JSON.parse(stats.stdout).otlp, result.otlp);
  const text = await cli(['stats', file, '-q']);
  const o = result.otlp;
  const line = `${o.spansSent} spans sent, ${o.spansDropped} dropped; ${o.requestsDropped} of ${o.requestsSent + o.requestsDropped} requests dropped (${o.itemsDropped} items)`;
  assert.ok(text.stdout.includes(`otlp      ${line}`), text.stdout);
  const report = await cli(['report', file, '-q']);
  assert.equal(report.code, 0, report.stderr);
  assert.ok(report.stdout.includes(`OTLP export: ${line}`), report.stdout);
});

test('collector gone mid-way, and a slow one: what was not taken is counted as dropped, sent + dropped = all', async () => {
  const receiver = await startReceiver({ answer: ({ n: i }) => (i === 1 ? { status: 200 } : { status: 200, delayMs: 30_000 }) });
  try {
    const { result, offline } = await traced(receiver.url, { env: WARM });
    assert.equal(result.status, 'stopped');
    assert.ok(result.otlp.itemsSent > 0, 'the first request went through');
    assert.ok(result.otlp.itemsDropped > 0, 'the ones that hung were given up');
    assertAccounted(result.otlp, offline);
  } finally {
    await receiver.close();
  }
  const down = await startReceiver();
  await down.close();
  const { result, offline } = await traced(down.url);
  assertAccounted(result.otlp, offline);
});

test('the queue is bounded in bytes: past it requests are dropped at once and counted; the file is complete', async () => {
  const { result, offline } = await traced(`http://127.0.0.1:${await closedPort()}`, { rounds: 300, env: { OTLP_TEST_QUEUE_BYTES: '2048' } });
  assert.equal(result.status, 'stopped');
  assert.equal(result.eventsDropped, 0);
  assert.ok(result.otlp.requestsDropped >= 4, `requests dropped: ${result.otlp.requestsDropped}`);
  assert.equal(result.otlp.itemsSent, 0);
  assertAccounted(result.otlp, offline);
});

test('a startup session exports where OpenTelemetry\'s variables say (endpoint, headers, service name), and only there without TRACEPIPE_OUTPUT', async () => {
  const receiver = await startReceiver();
  try {
    const body = `import { defineProvider } from 'tracepipe';
const p = defineProvider('Otlp.Startup', { spans: { Work: { id: 1, fields: [['n', 'u32']] } } });
for (let i = 0; i < 3; i++) p.Work.run(() => undefined, i);`;
    const r = await run(process.execPath, ['--import', 'tracepipe/register', '--input-type=module', '-e', body], {
      env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Otlp.Startup', TRACEPIPE_OUTPUT: '', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=core', OTEL_SERVICE_NAME: 'startup-svc' },
    });
    assert.equal(r.code, 0, r.stderr);
    const spans = spansOf(receiver.received.traces);
    assert.deepEqual(spans.map((s) => s.attrs.n).sort(), ['0', '1', '2'], `stderr: ${r.stderr}; requests: ${receiver.attempts.map((a) => a.signal)}`);
    assert.equal(spans[0].resource['service.name'], 'startup-svc');
    assert.equal(receiver.attempts[0].headers.authorization, 'Bearer abc');
    assert.equal(receiver.attempts[0].headers['x-team'], 'core');
  } finally {
    await receiver.close();
  }
});

test('a bad OTLP variable is one clear line', async () => {
  const r = await run(process.execPath, ['--import', 'tracepipe/register', '-e', '0'], { env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OTLP_ENDPOINT: 'localhost:4318' } });
  assert.match(r.stderr, /TRACEPIPE_OTLP_ENDPOINT: otlp.endpoint must be an http or https URL, not "localhost:4318"/);
});

// fetch refuses such headers on the sender thread, where the refusal only showed as every export
// dropped after six retries: they are refused where the session is asked for, in one line.
test('an OTLP header HTTP forbids is refused at the start: one line from the environment, a rejection from the API', async () => {
  const r = await run(process.execPath, ['--import', 'tracepipe/register', '-e', 'process.exitCode = 3'], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: '', TRACEPIPE_OTLP_ENDPOINT: 'http://127.0.0.1:1', TRACEPIPE_OTLP_HEADERS: 'a=b%0Ac' },
  });
  assert.match(r.stderr, /otlp header a's value "b\\nc" holds a character HTTP forbids/);
  assert.equal(r.code, 3, 'the application runs and exits as it would');
  const { startSession } = await import('../dist/index.js');
  await assert.rejects(startSession({ providers: 'Runtime.Process', otlp: { endpoint: 'http://127.0.0.1:1', headers: { 'a b': 'c' } } }), /otlp header name "a b" is not an HTTP header name/);
});
