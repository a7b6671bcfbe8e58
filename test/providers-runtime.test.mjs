import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasSubscribers } from 'node:diagnostics_channel';
import http from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { eventRole, readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// These watch the watchdog's thread: from each session's start, not a second in (test/watchdog-first-second.test.mjs).
process.env.TRACEPIPE_WATCHDOG_AFTER_MS = '0';

const INDEX = new URL('../dist/index.js', import.meta.url).href;

async function eventsOf(file) {
  const out = [];
  for await (const e of readTrace(file)) out.push(e);
  return out;
}

function blockFor(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('Runtime.EventLoop: a stall is reported by the watchdog while it lasts, then its duration; delay and utilisation per interval', { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'loop.tptrace');
  const session = await startSession({ providers: 'Runtime.EventLoop:*:5:IntervalSec=0.1;StallMs=100', output: file });
  const originNs = session.originNs;
  await new Promise((r) => setTimeout(r, 250));
  blockFor(600);
  const blockEndNs = Number(process.hrtime.bigint() - originNs);
  await new Promise((r) => setTimeout(r, 250));
  await session.stop();
  const events = await eventsOf(file);
  const start = events.find((e) => e.name === 'StallStart');
  const end = events.find((e) => e.name === 'StallEnd');
  assert.ok(start && end, 'one stall seen');
  assert.equal(events.filter((e) => e.name === 'StallEnd').length, 1, 'the quiet waits around it are not stalls');
  assert.equal(start.fields.thread, 0);
  assert.notEqual(start.threadId, 0, 'written by the watchdog thread');
  assert.ok(start.timestampNs < blockEndNs, 'StallStart was written while the main thread was still blocked');
  assert.ok(start.fields.blockedMs >= 100);
  assert.ok(end.timestampNs > start.timestampNs);
  assert.ok(end.fields.durationMs >= 590, `stall of ${end.fields.durationMs} ms covers the 600 ms block`);
  const delays = events.filter((e) => e.name === 'Delay');
  assert.ok(delays.length >= 3);
  assert.ok(delays.every((e) => e.threadId === 0 && e.fields.utilization >= 0 && e.fields.utilization <= 1));
  assert.ok(delays.some((e) => e.fields.maxMs >= 500), `the interval with the block shows it as delay: ${JSON.stringify(delays.map((e) => [e.timestampNs - blockEndNs, e.fields.maxMs, e.fields.samples]))}`);
});

test('Runtime.GCHeap: heap and per-space statistics at start, on the interval and after mark-compacts', { timeout: 30_000 }, async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const file = join(await tempDir(t), 'heap.tptrace');
  const session = await startSession({ providers: 'Runtime.GCHeap:*:5:IntervalSec=0.05', output: file });
  await new Promise((r) => setTimeout(r, 200));
  gc();
  await new Promise((r) => setTimeout(r, 50));
  await session.stop();
  const events = await eventsOf(file);
  const stats = events.filter((e) => e.name === 'HeapStats');
  const reasons = new Set(stats.map((e) => e.fields.reason));
  for (const r of ['start', 'interval', 'mark-compact']) assert.ok(reasons.has(r), `a HeapStats for ${r}`);
  assert.ok(stats.every((e) => e.fields.usedBytes > 0n && e.fields.usedBytes <= e.fields.totalBytes && e.fields.limitBytes > 0n));
  // What v8.getHeapStatistics() says, whether read through the GC hook's addon or node:v8.
  const { getHeapStatistics } = await import('node:v8');
  const h = getHeapStatistics();
  assert.ok(stats.every((e) => e.fields.limitBytes === BigInt(h.heap_size_limit) && e.fields.nativeContexts >= 1 && e.fields.mallocedBytes > 0n), JSON.stringify(stats[0].fields, (k, v) => (typeof v === 'bigint' ? String(v) : v)));
  const spaces = new Set(events.filter((e) => e.name === 'HeapSpace').map((e) => e.fields.space));
  assert.ok(spaces.has('old_space') && spaces.has('new_space'), [...spaces].join());
});

// Mocking libraries (sinon's fake timers) replace the global \`performance\` with a stand-in whose
// eventLoopUtilization is missing: the loop sampler and Runtime.EventLoop's intervals keep Node's own.
test('an application that swaps globalThis.performance for a stand-in while a startup session samples its loop runs on and exits 0', { timeout: 30_000 }, async (t) => {
  const dir = await tempDir(t);
  const app = `
    const real = globalThis.performance;
    setTimeout(() => {
      globalThis.performance = { now: () => real.now(), timeOrigin: real.timeOrigin };
      const busy = setInterval(() => { const end = Date.now() + 2; while (Date.now() < end); }, 5);
      setTimeout(() => { clearInterval(busy); globalThis.performance = real; console.log('app done'); }, 400);
    }, 50);`;
  for (const providers of [undefined, 'Runtime.Counters:*:4:IntervalSec=0.05']) {
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_'))), TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'swap-{pid}.tptrace'), ...(providers ? { TRACEPIPE_PROVIDERS: providers } : {}) };
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', new URL('../dist/register.js', import.meta.url).pathname, '-e', app], { env, timeout: 20_000 });
    assert.equal(stdout.trim(), 'app done', stderr);
  }
});

test('Runtime.Process: rundown at start and stop with versions, threads and resource usage', { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'process.tptrace');
  const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
  await new Promise((r) => worker.once('online', r));
  t.after(() => worker.terminate());
  // Block mode: its drain is a worker (a Drop-mode file's is native where the addon is built, and no thread of Node's).
  const session = await startSession({ providers: 'Runtime.Process', output: file, bufferingMode: 'block' });
  await session.stop();
  const events = await eventsOf(file);
  for (const phase of ['start', 'stop']) {
    const p = events.find((e) => e.name === 'Process' && e.fields.phase === phase);
    assert.ok(p, `Process ${phase}`);
    assert.equal(p.fields.session, session.id);
    assert.equal(p.fields.pid, process.pid);
    assert.equal(p.fields.nodeVersion, process.version);
    assert.equal(p.fields.v8Version, process.versions.v8);
    assert.deepEqual(JSON.parse(p.fields.argv), process.argv);
    const threads = events.filter((e) => e.name === 'Thread' && e.fields.phase === phase);
    const role = (id) => threads.find((e) => e.fields.threadId === id)?.fields.role;
    assert.equal(role(0), 'main');
    assert.equal(role(worker.threadId), 'worker', "the application's worker");
    assert.ok(threads.some((e) => e.fields.role === 'tracepipe-drain'), `the session's own drain thread is marked: ${threads.map((e) => e.fields.role)}`);
    const ru = events.find((e) => e.name === 'ResourceUsage' && e.fields.phase === phase);
    assert.ok(ru.fields.userCpuUs > 0n && ru.fields.rssBytes > 0n);
  }
});

test('Node.Channels: http server and client, fetch and sockets become events, subscribed only while enabled', { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'channels.tptrace');
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  assert.equal(hasSubscribers('http.server.request.start'), false, 'nothing listens before a session');
  // The events without the spans: a session that records the HttpServer span gets no HttpServerRequest (below).
  const session = await startSession({ providers: 'Node.Channels:0x7', output: file });
  assert.equal(hasSubscribers('http.server.request.start'), true);
  await new Promise((resolve, reject) => http.get(`${base}/plain`, { agent: false }, (res) => res.resume().on('end', resolve)).on('error', reject));
  const res = await fetch(`${base}/fetched?x=1`);
  await res.text();
  server.closeAllConnections();
  await new Promise((r) => setTimeout(r, 100));
  await session.stop();
  for (const c of ['http.server.request.start', 'http.client.request.start', 'undici:request:create', 'net.server.socket']) {
    assert.equal(hasSubscribers(c), false, `${c} unsubscribed after the session`);
  }
  const events = await eventsOf(file);
  const served = events.filter((e) => e.name === 'HttpServerRequest');
  assert.deepEqual(served.map((e) => [e.fields.method, e.fields.url, e.fields.status]).sort(), [['GET', '/fetched?x=1', 200], ['GET', '/plain', 200]]);
  assert.ok(served.every((e) => e.fields.bytes > 0 && e.fields.durationMs >= 0));
  const client = events.find((e) => e.name === 'HttpClientRequest');
  assert.deepEqual([client.fields.method, client.fields.host, client.fields.path, client.fields.status, client.fields.bytes], ['GET', '127.0.0.1', '/plain', 200, 12]);
  const fetched = events.find((e) => e.name === 'UndiciRequest');
  assert.deepEqual([fetched.fields.method, fetched.fields.origin, fetched.fields.path, fetched.fields.status, fetched.fields.bytes], ['GET', base, '/fetched?x=1', 200, 18]);
  const sockets = events.filter((e) => e.name === 'NetSocket');
  assert.ok(sockets.some((e) => e.fields.side === 'server' && e.fields.remoteAddress === '127.0.0.1' && e.fields.bytesRead > 0));
  assert.ok(sockets.some((e) => e.fields.side === 'client' && e.fields.remotePort === server.address().port));
});

/**
 * The served requests of a trace as { url, bytes, durationMs }: its HttpServerRequest events (`form`
 * 'event'), or its HttpServer spans (url as they began, bytes as they ended, the time between; 'span'),
 * with none of the other form.
 */
function servedRequests(events, form) {
  const asEvents = events.filter((e) => e.name === 'HttpServerRequest').map((e) => ({ url: e.fields.url, bytes: e.fields.bytes, durationMs: e.fields.durationMs }));
  const begun = new Map();
  const asSpans = [];
  for (const e of events) {
    const role = eventRole(e);
    if (role?.span !== 'HttpServer') continue;
    if (role.kind === 'span-begin') begun.set(e.fields.spanId, e);
    else asSpans.push({ url: begun.get(e.fields.spanId).fields.url, bytes: e.fields.bytes, durationMs: Number(e.timestampNs - begun.get(e.fields.spanId).timestampNs) / 1e6 });
  }
  assert.equal((form === 'event' ? asSpans : asEvents).length, 0, `${asEvents.length} request events and ${asSpans.length} request spans: each request once, as its ${form}`);
  return form === 'event' ? asEvents : asSpans.sort((a, b) => a.url.localeCompare(b.url));
}

test('Node.Channels in two sessions at once, with and without spans: each records every served request once, as its span or as its event', { timeout: 30_000 }, async (t) => {
  const dir = await tempDir(t);
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const spans = await startSession({ providers: 'Node.Channels', output: join(dir, 'spans.tptrace') });
  const plain = await startSession({ providers: 'Node.Channels:0x1', output: join(dir, 'events.tptrace') });
  for (const path of ['/a', '/b', '/c']) await (await fetch(`http://127.0.0.1:${server.address().port}${path}`)).text();
  server.closeAllConnections();
  await plain.stop();
  await spans.stop();
  assert.deepEqual(servedRequests(await eventsOf(join(dir, 'spans.tptrace')), 'span').map((r) => r.url), ['/a', '/b', '/c']);
  assert.deepEqual(servedRequests(await eventsOf(join(dir, 'events.tptrace')), 'event').map((r) => r.url), ['/a', '/b', '/c']);
});

for (const [mode, providers, form] of [['the request event (http 0x1)', 'Node.Channels:0x1', 'event'], ['the HttpServer span, no request event (default)', 'Node.Channels', 'span']]) {
  test(`Node.Channels, ${mode}: pipelined requests on one keep-alive socket each get their own url, duration and exact bytes`, { timeout: 30_000 }, async (t) => {
    const file = join(await tempDir(t), 'pipelined.tptrace');
    const bodies = { '/a': 'a'.repeat(10), '/b': 'b'.repeat(5000), '/c': 'c' };
    // The second answer waits, so the third request is parsed while the first two are still open.
    const server = http.createServer((req, res) => setTimeout(() => res.end(bodies[req.url]), req.url === '/b' ? 50 : 0));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const session = await startSession({ providers, output: file });
    const socket = connect(server.address().port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => (text += d));
    socket.write(Object.keys(bodies).map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    // /c answers last, so its one-byte body ends the stream.
    await new Promise((resolve) => socket.on('data', () => text.endsWith('\r\n\r\nc') && resolve()));
    const received = text.length;
    socket.destroy();
    await session.stop();
    const served = servedRequests(await eventsOf(file), form);
    assert.deepEqual(served.map((e) => e.url), ['/a', '/b', '/c']);
    assert.equal(served.reduce((n, e) => n + e.bytes, 0), received, 'every byte the socket wrote is counted once');
    for (const e of served) {
      const headers = e.bytes - bodies[e.url].length;
      assert.ok(headers > 40 && headers < 400, `${e.url}: ${e.bytes} bytes for a ${bodies[e.url].length}-byte body`);
    }
    assert.ok(served[1].durationMs >= served[0].durationMs, 'the delayed answer took longer than the first');
  });
}

test('runtime providers in a worker thread describe that thread; a bad argument warns and falls back', { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'worker.tptrace');
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const session = await startSession({ providers: 'Runtime.GC,Runtime.EventLoop:0x1:5:IntervalSec=oops', output: file });
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     import(${JSON.stringify(INDEX)}).then(async () => {
       let keep = [];
       for (let i = 0; i < 30; i++) { keep.push(new Array(50000).fill(i).map((n) => ({ n }))); if (keep.length > 3) keep.shift(); await new Promise((r) => setImmediate(r)); }
       setTimeout(() => parentPort.postMessage('done'), 1200);
     });`,
    { eval: true },
  );
  const workerThread = worker.threadId;
  await new Promise((r) => worker.once('message', r));
  await worker.terminate();
  await session.stop();
  const events = await eventsOf(file);
  assert.ok(events.some((e) => e.name === 'GCPause' && e.threadId === workerThread), 'the worker reports its own GC pauses');
  assert.ok(events.some((e) => e.name === 'Delay' && e.threadId === workerThread), 'and its own event-loop delay');
  assert.ok(warnings.some((m) => m.includes('IntervalSec="oops"')), warnings.join('\n'));
});

test('enabled runtime providers hold nothing that keeps the process alive (timers and the watchdog are unref\'d)', { timeout: 30_000 }, async (t) => {
  const dir = await tempDir(t);
  const plain = await startSession({ providers: 'Test.Nothing', output: join(dir, 'plain.tptrace') });
  // As long after the start as below: a session runs as soon as it resolves, while the reads of the
  // modules it loaded may still be closing their files.
  await new Promise((r) => setTimeout(r, 100));
  const baseline = process.getActiveResourcesInfo().sort();
  await plain.stop();
  const all = await startSession({ providers: 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process,Node.Channels', output: join(dir, 'all.tptrace') });
  await new Promise((r) => setTimeout(r, 100));
  const withProviders = process.getActiveResourcesInfo().sort();
  await all.stop();
  assert.deepEqual(withProviders, baseline);
});
