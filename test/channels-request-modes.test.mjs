// Issue 29: Node.Channels' request spans in each mode: the span kept current across await (default),
// current in the handler's synchronous run only (context=sync), and head sampling (sample=, TRACEPIPE_SAMPLE)
// that keeps or leaves out a request's whole tree and says so in the trace, `report` and `explain`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { defineProvider, eventRole, Level } from '../dist/index.js';
import { recordSession } from './helpers/record-session.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const N = 100;

const app = defineProvider('Test.RequestModes', {
  spans: { Query: { id: 10, level: Level.Informational, fields: [['sql', 'string']] } },
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A server whose handler begins a span at once, one after an await and a timer, and one inside
 * another after an await; each names its request's url, so the test knows which request it belongs to.
 */
async function listen() {
  const server = http.createServer(async (req, res) => {
    const me = req.url.slice(1);
    app.Query.end(app.Query.begin(`${me}/sync`));
    await sleep(Number(me.slice(3)) % 7);
    await app.Query.run(async () => {
      await sleep(1);
      await app.Query.run(() => sleep(1), `${me}/inner`);
    }, `${me}/outer`);
    res.end(me);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

/** N requests at once, each on its own connection; resolves when all are answered. */
async function serveConcurrently(base) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: N });
  const get = (path) => new Promise((resolve, reject) => http.get(`${base}${path}`, { agent }, (r) => r.resume().on('end', resolve)).on('error', reject));
  try {
    await Promise.all(Array.from({ length: N }, (_, i) => get(`/req${i}`)));
  } finally {
    agent.destroy();
  }
}

/** The spans of a trace by id: name, begin fields, whether it ended. */
function spansOf(events) {
  const spans = new Map();
  for (const e of events) {
    const role = eventRole(e);
    if (role?.kind === 'span-begin') spans.set(e.fields.spanId, { name: `${e.provider}/${role.span}`, begin: e.fields, ended: false });
    else if (role?.kind === 'span-end') spans.get(e.fields.spanId).ended = true;
  }
  return spans;
}

async function traceRequests(t, providers) {
  const { server, base } = await listen();
  t.after(() => server.close());
  return recordSession(t, providers, () => serveConcurrently(base));
}

/** The request span a span descends from, walking its parents (undefined: it has none in the trace). */
function requestOf(spans, s) {
  while (s && s.name !== 'Node.Channels/HttpServer') s = spans.get(s.begin.parentSpanId);
  return s;
}

for (const [mode, spec] of [
  ['default (context across await)', 'Node.Channels,Test.RequestModes'],
  ['sample=0.5', 'Node.Channels:*:5:sample=0.5,Test.RequestModes'],
]) {
  test(`100 concurrent requests, ${mode}: every span descends from its own request, and a request's tree is kept or left out whole`, { timeout: 60_000 }, async (t) => {
    const { events } = await traceRequests(t, spec);
    const spans = spansOf(events);
    const requests = [...spans.values()].filter((s) => s.name === 'Node.Channels/HttpServer');
    const queries = [...spans.values()].filter((s) => s.name === 'Test.RequestModes/Query');
    const kept = new Set(requests.map((r) => r.begin.url.slice(1)));
    if (mode === 'sample=0.5') {
      // 100 draws at 0.5: outside 10…90 kept has a probability below 1e-15.
      assert.ok(kept.size >= 10 && kept.size <= 90, `${kept.size} of ${N} requests kept at 0.5`);
    } else assert.equal(kept.size, N);
    assert.equal(queries.length, kept.size * 3, 'every kept request has its three child spans, and no left-out one has any');
    for (const q of queries) {
      const owner = q.begin.sql.split('/')[0];
      assert.ok(q.ended, `${q.begin.sql} ended`);
      assert.equal(requestOf(spans, q)?.begin.url, `/${owner}`, `${q.begin.sql} descends from its own request`);
    }
    for (const r of requests) assert.equal(r.begin.parentSpanId, 0n, 'a served request is a root');
    assert.equal(events.filter((e) => e.name === 'HttpServerRequest').length, 0, 'a session that records the HttpServer span gets no duplicate request event');
    const sampling = events.filter((e) => e.name === 'RequestSampling').map((e) => ({ ...e.fields }));
    if (mode === 'sample=0.5') assert.deepEqual(sampling, [{ rate: 0.5, requests: 0, kept: 0 }, { rate: 0.5, requests: N, kept: kept.size }], 'the rate as the session began, the counts as it stopped');
    else assert.deepEqual(sampling, [], 'nothing sampled, nothing said');
  });
}

test('context=sync: the request span is current in the handler until its first await, and nothing after it', { timeout: 60_000 }, async (t) => {
  const { events } = await traceRequests(t, 'Node.Channels:*:5:context=sync,Test.RequestModes');
  const spans = spansOf(events);
  const queries = [...spans.values()].filter((s) => s.name === 'Test.RequestModes/Query');
  assert.equal(queries.length, N * 3);
  for (const q of queries) {
    const request = requestOf(spans, q);
    if (q.begin.sql.endsWith('/sync')) assert.equal(request?.begin.url, `/${q.begin.sql.split('/')[0]}`, `${q.begin.sql}: begun before any await, the child of its request`);
    // After an await no request is current: never another request's child.
    else assert.equal(request, undefined, `${q.begin.sql}: begun after an await, it has no request as ancestor`);
  }
});

test('TRACEPIPE_SAMPLE=0 leaves every request out, counted; report and explain say their counts are sampled', { timeout: 60_000 }, async (t) => {
  process.env.TRACEPIPE_SAMPLE = '0';
  let trace;
  try {
    trace = await traceRequests(t, 'Node.Channels,Test.RequestModes');
  } finally {
    delete process.env.TRACEPIPE_SAMPLE;
  }
  const { events, file } = trace;
  // The test's own client requests are roots of their own, not sampled.
  const ofServed = events.filter((e) => e.name === 'HttpServerRequest' || (eventRole(e)?.kind === 'span-begin' && eventRole(e).span !== 'HttpClient'));
  assert.equal(ofServed.length, 0, 'nothing of a left-out request');
  assert.deepEqual({ ...events.findLast((e) => e.name === 'RequestSampling').fields }, { rate: 0, requests: N, kept: 0 });
  for (const command of ['report', 'explain']) {
    const r = spawnSync(process.execPath, [CLI, command, file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /requests sampled: 0 of 100 kept \(rate 0; /, `${command} says the requests were sampled`);
  }
});

test('sample=0.5 without spans (http 0x1): a request event for each request kept, as RequestSampling counts them', { timeout: 60_000 }, async (t) => {
  const { events } = await traceRequests(t, 'Node.Channels:0x1:5:sample=0.5');
  const { requests, kept } = events.findLast((e) => e.name === 'RequestSampling').fields;
  assert.equal(requests, N);
  assert.ok(kept >= 10 && kept <= 90, `${kept} of ${N} requests kept at 0.5`);
  const served = events.filter((e) => e.name === 'HttpServerRequest');
  assert.equal(served.length, kept, 'the request event follows head sampling: kept or left out with its tree');
  assert.equal(new Set(served.map((e) => e.fields.url)).size, kept, 'one event per kept request');
});

test('sample=0.5 in report: span counts of the kept requests, with the estimate for all of them', { timeout: 60_000 }, async (t) => {
  const { events, file } = await traceRequests(t, 'Node.Channels:*:5:sample=0.5,Test.RequestModes');
  const kept = events.filter((e) => eventRole(e)?.kind === 'span-begin' && eventRole(e).span === 'HttpServer').length;
  const r = spawnSync(process.execPath, [CLI, 'report', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`requests sampled: ${kept} of 100 kept \\(rate 0\\.5; [^)]*\\); counts of requests' spans are of the kept ones, ×${(100 / kept).toFixed(2)} for all`));
  assert.match(r.stdout, new RegExp(`^  Node\\.Channels/HttpServer +${kept} +100 `, 'm'), 'the kept requests, and the estimate for all (exact here: the session counted them)');
});

test('a sample= that is not a rate, a context= that is no mode, or a propagate= that is no format, warns once and keeps every request with its context', { timeout: 60_000 }, async (t) => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const { events } = await traceRequests(t, 'Node.Channels:*:5:sample=2;context=synch;propagate=b3,Test.RequestModes');
  assert.equal(events.filter((e) => eventRole(e)?.kind === 'span-begin' && eventRole(e).span === 'HttpServer').length, N);
  const spans = spansOf(events);
  const inner = [...spans.values()].filter((s) => s.name === 'Test.RequestModes/Query' && s.begin.sql.endsWith('/inner'));
  assert.ok(inner.length === N && inner.every((q) => requestOf(spans, q)?.begin.url === `/${q.begin.sql.split('/')[0]}`), 'the context across await');
  await sleep(10);
  assert.deepEqual(warnings.filter((m) => m.includes('argument')).sort(), [
    'tracepipe: Node.Channels argument context="synch" is not one of sync, async; ignoring it',
    'tracepipe: Node.Channels argument propagate="b3" is not one of w3c, none; ignoring it',
    'tracepipe: Node.Channels argument sample="2" is not a number in [0, 1]; ignoring it',
  ]);
});
