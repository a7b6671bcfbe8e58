// convert --to otlp, decoded with OpenTelemetry's own protobuf definitions (helpers/otlp-decode.mjs)
// and checked against `tracepipe dump` of a real trace (fixtures/otlp-trace.mjs): every span with
// its parent, trace id, attributes, status and timing; events inside a span as span events, the
// others as log records; the counter as a gauge; GC pauses as a histogram by kind; OTLP/JSON the same.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../dist/format/trace-reader.js';
import { assertOneLine, cli, dumpJsonl, richTrace, run } from './helpers/convert-helpers.mjs';
import { attributesOf, decodeOtlpFile, spansOf } from './helpers/otlp-decode.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/otlp-trace.mjs', import.meta.url));

let dir;
let file;
let dump;
let wallNs;
let requests;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-otlp-'));
  file = join(dir, 'app.tptrace');
  const r = await run(process.execPath, ['--expose-gc', FIXTURE, file]);
  assert.equal(r.code, 0, r.stderr);
  dump = await dumpJsonl(file);
  assert.equal(dump.code, 0, dump.stderr);
  wallNs = BigInt((await readTrace(file).summary()).header.clock.wallClockNs);
  const c = await cli(['convert', file, '--to', 'otlp', '-q']);
  assert.equal(c.code, 0, c.stderr);
  requests = decodeOtlpFile(await readFile(join(dir, 'app.otlp')));
});
after(() => rm(dir, { recursive: true, force: true }));

const unix = (ns) => (wallNs + BigInt(ns)).toString();

/** The dump's spans: begin and end paired by id. */
function dumpSpans() {
  const spans = new Map();
  for (const e of dump.events) {
    if (e.name.endsWith('.Begin')) spans.set(e.fields.spanId, { begin: e, end: undefined });
    else if (e.name.endsWith('.End')) spans.get(e.fields.spanId).end = e;
  }
  return spans;
}

test('every span: parent, trace id, attributes, status, timing as the trace file holds them', () => {
  const spans = spansOf(requests.filter((r) => r.signal === 'traces').map((r) => r.request));
  const expected = dumpSpans();
  assert.equal(spans.length, expected.size);
  const byOwnId = new Map(spans.map((s) => [s.attrs['tracepipe.span_id'], s]));
  const lastNs = Math.max(...dump.events.map((e) => e.timestampNs));
  for (const [id, { begin, end }] of expected) {
    const s = byOwnId.get(id);
    assert.ok(s, `span ${id} exported`);
    assert.equal(s.name, begin.name.slice(0, -'.Begin'.length));
    assert.equal(s.scope, 'Otlp.Test');
    assert.equal(s.resource['service.name'], 'unknown_service:otlp-trace.mjs');
    assert.match(s.traceId, /^[0-9a-f]{32}$/);
    assert.match(s.spanId, /^[0-9a-f]{16}$/);
    assert.equal(s.startTimeUnixNano, unix(begin.timestampNs));
    assert.equal(s.endTimeUnixNano, unix(end ? end.timestampNs : lastNs));
    const { spanId: _s, parentSpanId, ...fields } = begin.fields;
    const attrs = { ...fields, 'thread.id': String(begin.threadId), 'tracepipe.span_id': id };
    if (end) {
      const { spanId: _e, error, errorName, ...endFields } = end.fields;
      Object.assign(attrs, endFields);
      assert.deepEqual(s.status ?? {}, error ? { code: 2, message: errorName } : {});
    } else {
      attrs['tracepipe.unfinished'] = true;
      assert.deepEqual(s.status ?? {}, {});
    }
    assert.deepEqual(normalize(s.attrs), normalize(attrs), `attributes of ${s.name} ${id}`);
    if (parentSpanId === '0') {
      assert.equal(s.parentSpanId, undefined);
    } else {
      const parent = byOwnId.get(parentSpanId);
      assert.equal(s.parentSpanId, parent.spanId, `parent of ${id}`);
      assert.equal(s.traceId, parent.traceId, `trace of ${id}`);
    }
  }
  const roots = spans.filter((s) => s.parentSpanId === undefined);
  assert.equal(new Set(roots.map((s) => s.traceId)).size, roots.length, 'each root its own trace');
  assert.equal(new Set(spans.map((s) => s.spanId)).size, spans.length, 'span ids unique');
  const failed = spans.find((s) => s.attrs.path === '/fails');
  assert.deepEqual(failed.status, { code: 2, message: 'RangeError' });
});

/** Attribute values compared as text: int64 comes back as a decimal string, the dump has small ints as numbers. */
function normalize(attrs) {
  return Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, String(v)]).sort());
}

test('an event inside a span is a span event; one outside any span is a log record with severity and fields', () => {
  const spans = spansOf(requests.filter((r) => r.signal === 'traces').map((r) => r.request));
  const inside = dump.events.find((e) => e.name === 'Note' && e.fields.text === 'inside');
  const outside = dump.events.find((e) => e.name === 'Note' && e.fields.text === 'before any span');
  const note = spans.find((s) => s.attrs.path === '/note');
  assert.equal(note.events.length, 1);
  assert.equal(note.events[0].name, 'Otlp.Test/Note');
  assert.equal(note.events[0].timeUnixNano, unix(inside.timestampNs));
  assert.deepEqual(normalize(attributesOf(note.events[0].attributes)), normalize(inside.fields));
  const logs = requests.filter((r) => r.signal === 'logs').flatMap((r) => r.request.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords.map((l) => ({ ...l, scope: sl.scope.name })))));
  // The body names the event (these definitions predate LogRecord.event_name, which holds it too).
  const notes = logs.filter((l) => l.body?.stringValue === 'Otlp.Test/Note');
  assert.equal(notes.length, 1, 'the note outside any span is a log record');
  const log = notes[0];
  assert.equal(log.scope, 'Otlp.Test');
  assert.equal(log.timeUnixNano, unix(outside.timestampNs));
  assert.equal(log.severityNumber, 13);
  assert.equal(log.severityText, 'WARN');
  assert.deepEqual(normalize(attributesOf(log.attributes)), normalize({ ...outside.fields, 'thread.id': outside.threadId }));
});

test('the counter is a gauge of its values; GC pauses a histogram by kind with the count and total of the trace', () => {
  const metrics = requests.filter((r) => r.signal === 'metrics').flatMap((r) => r.request.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)));
  const inflight = metrics.filter((m) => m.name === 'Otlp.Test/Inflight');
  const points = inflight.flatMap((m) => m.gauge.dataPoints);
  const counterEvents = dump.events.filter((e) => e.name === 'Inflight.Counter');
  assert.equal(inflight[0].unit, 'requests');
  assert.deepEqual(points.map((p) => [p.timeUnixNano, p.asDouble]), counterEvents.map((e) => [unix(e.timestampNs), e.fields.requests]));

  const pauses = dump.events.filter((e) => e.name === 'GCPause');
  assert.ok(pauses.length >= 3, 'forced collections were traced');
  const byKind = {};
  for (const e of pauses) {
    const k = (byKind[e.fields.kind] ??= { count: 0, sum: 0 });
    k.count++;
    k.sum += Number(e.fields.durationNs) / 1e6;
  }
  const hist = {};
  for (const m of metrics.filter((x) => x.name === 'Runtime.GC/GCPause')) {
    assert.equal(m.unit, 'ms');
    assert.equal(m.histogram.aggregationTemporality, 1);
    for (const p of m.histogram.dataPoints) {
      const kind = attributesOf(p.attributes).kind;
      const h = (hist[kind] ??= { count: 0, sum: 0 });
      h.count += Number(p.count);
      h.sum += p.sum;
      assert.equal(p.bucketCounts.reduce((a, b) => a + Number(b), 0), Number(p.count));
      assert.equal(p.bucketCounts.length, p.explicitBounds.length + 1);
    }
  }
  assert.deepEqual(Object.keys(hist).sort(), Object.keys(byKind).sort());
  for (const k of Object.keys(byKind)) {
    assert.equal(hist[k].count, byKind[k].count);
    assert.ok(Math.abs(hist[k].sum - byKind[k].sum) < 1e-6);
  }
});

test('--json writes the same requests in OTLP/JSON, one a line', async () => {
  const out = join(dir, 'app.otlp.jsonl');
  const c = await cli(['convert', file, '--to', 'otlp', '--json', '-o', out, '-q']);
  assert.equal(c.code, 0, c.stderr);
  const lines = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, requests.length);
  const jsonSpans = lines.flatMap((l) => (l.resourceSpans ?? []).flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  const pbSpans = spansOf(requests.filter((r) => r.signal === 'traces').map((r) => r.request));
  assert.deepEqual(
    jsonSpans.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name, s.startTimeUnixNano, s.endTimeUnixNano]),
    pbSpans.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.name, s.startTimeUnixNano, s.endTimeUnixNano]),
  );
});

test('--json with another format is refused in one line', async () => {
  assertOneLine(await cli(['convert', file, '--to', 'jsonl', '--json']), 2, /--json is for --to otlp/);
});

test('drops: the gauge tracepipe.dropped_events, a running total, ends at what the trace lost', async () => {
  const { file: rich, result } = await richTrace(dir);
  assert.ok(result.eventsDropped > 0, 'the rich fixture drops events');
  const out = join(dir, 'rich.otlp');
  const c = await cli(['convert', rich, '--to', 'otlp', '-o', out, '-q']);
  assert.equal(c.code, 0, c.stderr);
  const points = decodeOtlpFile(await readFile(out))
    .filter((r) => r.signal === 'metrics')
    .flatMap((r) => r.request.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)))
    .filter((m) => m.name === 'tracepipe.dropped_events')
    .flatMap((m) => m.gauge.dataPoints);
  // A running total: the last point is the trace's count.
  assert.equal(points.at(-1).asDouble, result.eventsDropped);
});

test('spans go out in requests of up to 2,048, not 512 (a post costs about as much whatever its size)', async () => {
  const many = join(dir, 'many.tptrace');
  // 60 rounds of 6 requests, each with a query: 720 spans, all ended before the session stops.
  const r = await run(process.execPath, ['--expose-gc', FIXTURE, many, '', '60']);
  assert.equal(r.code, 0, r.stderr);
  const out = join(dir, 'many.otlp');
  const c = await cli(['convert', many, '--to', 'otlp', '-o', out, '-q']);
  assert.equal(c.code, 0, c.stderr);
  const perRequest = decodeOtlpFile(await readFile(out))
    .filter((q) => q.signal === 'traces')
    .map((q) => spansOf([q.request]).length);
  assert.ok(perRequest.reduce((a, b) => a + b, 0) > 720, `spans: ${perRequest}`);
  assert.equal(perRequest.length, 1, `spans per request: ${perRequest}`);
});
