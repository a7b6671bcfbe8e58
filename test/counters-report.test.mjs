// Counters in a trace file: `report` lists them, `report --html` draws a chart per provider and unit,
// and the Perfetto export has a counter track per counter (decoded by protoc, not by our own reader).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { ReportCharts } from '../dist/cli/report/report-charts.js';
import { readReport } from '../dist/cli/trace-report.js';
import { cli, needTool, run } from './helpers/convert-helpers.mjs';
import { parseProtoText } from './helpers/reader-text.mjs';
import { chromiumPath, openPage } from './helpers/report-page.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const app = defineProvider('Test.ReportApp', { counters: { Queue: { id: 1, unit: 'jobs', doc: 'jobs waiting' } } });
let file;
let values;

before(async () => {
  const dir = await tempDir({ after: (fn) => process.on('exit', fn) });
  file = join(dir, 'counters.tptrace');
  const session = await startSession({ providers: 'Runtime.Counters:*:5:IntervalSec=0.2,Test.ReportApp', output: file });
  for (let i = 1; i <= 10; i++) {
    app.Queue.set(i * 3);
    await new Promise((r) => setTimeout(r, 100));
  }
  await session.stop();
  values = [];
  for await (const e of readTrace(file)) if (e.name === 'HeapUsed.Counter') values.push(e.fields.bytes);
  assert.ok(values.length >= 4);
});

test('report: a counters section with every counter, its unit and figures', async () => {
  const r = await cli(['report', file]);
  assert.equal(r.code, 0, r.stderr);
  const section = r.stdout.split('\ncounters: ')[1];
  assert.ok(section, r.stdout);
  const line = (name) => section.split('\n').find((l) => l.trimStart().startsWith(`${name} `));
  const heap = line('Runtime.Counters/HeapUsed').trim().split(/\s+/);
  assert.equal(heap[1], 'bytes');
  assert.equal(Number(heap[2]), values.length);
  assert.equal(Number(heap[5].replaceAll(',', '')), Math.max(...values));
  assert.deepEqual(line('Test.ReportApp/Queue').trim().split(/\s+/), ['Test.ReportApp/Queue', 'jobs', '10', '3', '16.50', '30', '30']);
  assert.match(line('Runtime.Counters/GcCount'), /collections +\d+ .* \d+$/, 'an interval counter shows its total');
});

test('report --html data: a chart per provider and unit, a line per counter, and declared counters are not read as event-loop delay', async () => {
  const charts = new ReportCharts();
  const options = { infoMs: 10, warnMs: 50 };
  const { report, profile } = await readReport(file, options, (b) => charts.add(b));
  const data = charts.data(file, report, 'text', options, profile);
  const group = (provider, unit) => data.counters.find((g) => g.provider === provider && g.unit === unit);
  const mb = group('Runtime.Counters', 'MB');
  assert.ok(mb, JSON.stringify(data.counters.map((g) => [g.provider, g.unit])));
  const heap = mb.series.find((s) => s.name === 'HeapUsed');
  assert.deepEqual(heap.y, values.map((v) => v / 2 ** 20));
  assert.deepEqual(group('Test.ReportApp', 'jobs').series[0].y, [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
  assert.ok(group('Runtime.Counters', 'percent').series.some((s) => s.name === 'CpuUser'));
  assert.deepEqual(data.loopDelay, [], 'no Runtime.EventLoop/Delay in this trace');
});

test('report --html in a browser: the counter charts are drawn', { timeout: 120_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const html = join(dirname(file), 'counters.html');
  const r = await cli(['report', file, '--html', html]);
  assert.equal(r.code, 0, r.stderr);
  const page = await openPage(executablePath, html, join(dirname(file), 'counters.png'));
  assert.deepEqual(page.errors, []);
  for (const title of ['Counters: Runtime.Counters (MB)', 'Counters: Runtime.Counters (percent)', 'Counters: Test.ReportApp (jobs)']) {
    assert.ok(page.report.charts.includes(title), `${title} in ${page.report.charts.join(', ')}`);
  }
});

test('Perfetto export: a counter track per counter, with the trace’s values', { timeout: 120_000 }, async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const out = join(dirname(file), 'counters.pftrace');
  const r = await cli(['convert', file, '--to', 'perfetto', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  const schema = fileURLToPath(new URL('./fixtures/perfetto-trace.proto', import.meta.url));
  const decoded = await run('sh', ['-c', `protoc --decode=perfetto.protos.Trace --proto_path='${dirname(schema)}' '${schema}' < '${out}'`]);
  const packets = parseProtoText(decoded.stdout).packet;
  const tracks = new Map(packets.filter((p) => p.track_descriptor?.counter !== undefined).map((p) => [p.track_descriptor.name, p.track_descriptor.uuid]));
  const heapTrack = tracks.get('Runtime.Counters/HeapUsed bytes');
  assert.ok(heapTrack, [...tracks.keys()].join(', '));
  assert.ok(tracks.has('Test.ReportApp/Queue jobs') && tracks.has('Runtime.Counters/CpuUser percent'));
  const heap = packets.filter((p) => p.track_event?.type === 'TYPE_COUNTER' && p.track_event.track_uuid === heapTrack).map((p) => Number(p.track_event.double_counter_value));
  assert.deepEqual(heap, values);
});
