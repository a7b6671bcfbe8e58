// Issue 29: a trace whose requests were head-sampled (Node.Channels' sample=) says so wherever it counts
// requests, and gives the estimate for all of them beside the kept counts: `report` (text and JSON),
// `report --html` and `explain --json`. Only request trees are scaled (a server request's span and what
// began under it); spans outside them were all recorded. Durations stay as observed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { defineProvider, nodeChannels } from '../dist/index.js';
import { cli } from './helpers/convert-helpers.mjs';
import { chromiumPath, openPage } from './helpers/report-page.mjs';
import { tempDir } from './helpers/temp-dir.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';

const app = defineProvider('Test.SampledCounts', { spans: { Query: { id: 1, fields: [['sql', 'string']] } } });
const { HttpServer, RequestSampling } = nodeChannels;
const TYPES = [HttpServer.beginType, HttpServer.endType, app.Query.beginType, app.Query.endType, RequestSampling];
const MS = 1e6;

/**
 * Over 1 s: 10 kept requests (of 40 seen, rate 0.25: ×4), each with two queries under it, one of them
 * begun after its request ended (work the handler left running); and 5 queries of a timer, outside any
 * request. Estimates: 40 requests, 5 + 20 × 4 = 85 queries, 125 spans.
 */
async function sampledTrace(t) {
  const events = [{ type: RequestSampling, ms: 0, values: [0.25, 0, 0] }];
  const span = (type, ms, values) => events.push({ type, ms, values });
  for (let i = 0; i < 10; i++) {
    const request = 100 + 10 * i;
    const t0 = 10 + 90 * i;
    span(HttpServer.beginType, t0, [BigInt(request), 0n, 'GET', `/r${i}`]);
    span(app.Query.beginType, t0 + 1, [BigInt(request + 1), BigInt(request), `q${i}`]);
    span(app.Query.endType, t0 + 3, [BigInt(request + 1), false, '']);
    span(HttpServer.endType, t0 + 5, [BigInt(request), false, '', 200, 42]);
    span(app.Query.beginType, t0 + 6, [BigInt(request + 2), BigInt(request), `late${i}`]);
    span(app.Query.endType, t0 + 8, [BigInt(request + 2), false, '']);
  }
  for (let i = 0; i < 5; i++) {
    span(app.Query.beginType, 50 + 200 * i, [BigInt(900 + i), 0n, `timer${i}`]);
    span(app.Query.endType, 53 + 200 * i, [BigInt(900 + i), false, '']);
  }
  events.push({ type: RequestSampling, ms: 1000, values: [0.25, 40, 10] });
  const file = join(await tempDir(t), 'sampled.tptrace');
  const ordered = events.sort((a, b) => a.ms - b.ms).map((e, sequence) => ({ type: e.type, threadId: 0, timestampNs: e.ms * MS, values: e.values, sequence }));
  await writeTrace(file, TYPES, ordered);
  return file;
}

test('report on a sampled trace: the kept counts, the estimate for all requests beside them, and the request rates', async (t) => {
  const file = await sampledTrace(t);
  const r = await cli(['report', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^spans: 35 finished \(est\. 125 for all requests\), 0 unfinished$/m);
  assert.match(r.stdout, /^ {2}span +count +est\. count +total/m);
  assert.match(r.stdout, /^ {2}Node\.Channels\/HttpServer +10 +40 /m, 'a request tree root, scaled ×4');
  assert.match(r.stdout, /^ {2}Test\.SampledCounts\/Query +25 +85 /m, 'the 20 queries of requests scaled, the 5 of the timer not');
  assert.match(r.stdout, /requests sampled: 10 of 40 kept \(rate 0\.25; 10\.0 requests\/s kept, 40\.0 requests\/s in all\); counts of requests' spans are of the kept ones, ×4\.00 for all: the "est\." figures are those estimates; durations as observed/);
  const json = JSON.parse((await cli(['report', file, '--json'])).stdout);
  assert.equal(json.spans.estimatedFinished, 125);
  const byName = Object.fromEntries(json.spans.byName.map((x) => [x.span, x]));
  assert.deepEqual([byName['Node.Channels/HttpServer'].count, byName['Node.Channels/HttpServer'].inRequests, byName['Node.Channels/HttpServer'].estimatedCount], [10, 10, 40]);
  assert.deepEqual([byName['Test.SampledCounts/Query'].count, byName['Test.SampledCounts/Query'].inRequests, byName['Test.SampledCounts/Query'].estimatedCount], [25, 20, 85]);
});

test('explain --json on a sampled trace: the factor and every span count estimated for all requests', async (t) => {
  const file = await sampledTrace(t);
  const r = await cli(['explain', file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const { requestSampling, spanTypes, spans } = JSON.parse(r.stdout);
  assert.deepEqual(spanTypes, { 'Test.SampledCounts/Query': 25, 'Node.Channels/HttpServer': 10 }, 'the observed counts stay');
  assert.equal(spans.matching, 35);
  assert.deepEqual(requestSampling, { rate: 0.25, requests: 40, kept: 10, factor: 4, estimated: { spanTypes: { 'Test.SampledCounts/Query': 85, 'Node.Channels/HttpServer': 40 }, matching: 125 } });
  const text = (await cli(['explain', file])).stdout;
  assert.match(text, /^slowest spans: 10 of 35 finished \(est\. 125 for all requests\)$/m);
});

test('a trace without sampling: no estimates anywhere', async (t) => {
  const file = join(await tempDir(t), 'plain.tptrace');
  const events = [
    { type: HttpServer.beginType, threadId: 0, timestampNs: MS, values: [1n, 0n, 'GET', '/'], sequence: 0 },
    { type: HttpServer.endType, threadId: 0, timestampNs: 2 * MS, values: [1n, false, '', 200, 1], sequence: 1 },
  ];
  await writeTrace(file, TYPES, events);
  const json = JSON.parse((await cli(['report', file, '--json'])).stdout);
  assert.equal(json.spans.estimatedFinished, undefined);
  assert.equal(json.spans.byName[0].estimatedCount, undefined);
  assert.equal(json.explain.requestSampling, undefined);
  assert.doesNotMatch((await cli(['report', file])).stdout, /est\./);
});

test('report --html on a sampled trace: a section says the requests were sampled, with kept and estimated counts and rates', { timeout: 120_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const file = await sampledTrace(t);
  const html = join(file, '..', 'report.html');
  const r = await cli(['report', file, '--html', html]);
  assert.equal(r.code, 0, r.stderr);
  const result = await openPage(executablePath, html, join(file, '..', 'report.png'), async (page) => {
    await page.waitForFunction(() => window.tracepipeReport !== undefined, null, { timeout: 60_000 });
    return page.evaluate(() => {
      const section = [...document.querySelectorAll('section')].find((s) => s.querySelector('h2').textContent === 'Requests sampled');
      const rates = [...document.querySelectorAll('section')].find((s) => s.querySelector('h2').textContent === 'Events per second');
      return {
        note: section?.querySelector('.note').textContent,
        rows: section ? [...section.querySelectorAll('tr')].map((tr) => [...tr.children].map((c) => c.textContent)) : [],
        ratesNote: rates?.querySelector('.note').textContent,
      };
    });
  });
  const { note, rows, ratesNote } = result.interaction;
  assert.match(note ?? '', /kept 10 of 40 server requests whole \(rate 0\.25\).*×4\.00/);
  assert.deepEqual(rows, [
    ['span', 'kept', 'est. all', 'kept per second', 'est. per second'],
    ['Test.SampledCounts/Query', '25', '85', '25.0', '85.0'],
    ['Node.Channels/HttpServer', '10', '40', '10.0', '40.0'],
  ]);
  assert.match(ratesNote ?? '', /Requests were sampled \(rate 0\.25\): their events are the kept requests', ×4\.00 for all\./);
  assert.deepEqual(result.errors, [], 'no console errors');
});
