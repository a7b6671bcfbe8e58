// `tracepipe explain` on traces written event by event, so that every share is known in advance:
// the precedence of overlapping causes, shares that add up to the interval to the nanosecond, the
// samples the second pass keeps (the same numbers as a profile of every sample), and the options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { CpuProfileBuilder, frameLabel, functionTimes } from '../dist/analysis/cpu-profile.js';
import { cpuCover, idleFrames } from '../dist/analysis/explain/cpu-share.js';
import { app, at, begin, definitions, end, gcPause, MS, sample, SamplerStarted, stall, trace } from './helpers/explain-trace.mjs';
import { seededRandom } from './helpers/seeded-random.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
async function explain(file, args = []) {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'explain', file, ...args]);
  return stdout;
}

async function explainFails(file, args) {
  const r = await promisify(execFile)(process.execPath, [CLI, 'explain', file, ...args]).then(
    () => assert.fail('explain succeeded'),
    (e) => e,
  );
  return { code: r.code, stderr: r.stderr };
}

const sharesOf = (item) => Object.fromEntries(item.shares.map((s) => [s.cause, s.ns]));

test('overlapping causes are split by precedence: GC, stall, children, CPU, queued, unexplained, adding up to the interval', async (t) => {
  // The request runs 200–1200 ms. A mark-compact pauses 300–400, inside a stall of 350–600; its child
  // query runs 700–1000; the thread is on CPU in work ← handle 600–800 (idle otherwise); an earlier
  // request runs 150–1100.
  const events = [
    { type: SamplerStarted, threadId: 0, timestampNs: at(1), values: [0, 1000, 'native'] },
    ...definitions(1),
    begin(app.Req, 9, 0, 150, '/earlier'),
    begin(app.Req, 10, 0, 200, '/slow'),
    gcPause(300, 100, 'mark-compact'),
    ...stall(350, 250),
    begin(app.Query, 11, 10, 700, 'select 1'),
    end(app.Query, 11, 1000),
    end(app.Req, 9, 1100),
    end(app.Req, 10, 1200),
  ];
  for (let ms = 150; ms <= 1250; ms++) events.push(sample(ms, ms >= 600 && ms < 800 ? 2 : 3));
  const file = await trace(t, events);
  const report = JSON.parse(await explain(file, ['--span', 'Test.App/Req', '--top', '1', '--json']));
  assert.deepEqual(report.precedence, ['gc', 'stall', 'children', 'cpu', 'queued', 'unexplained']);
  const [item] = report.spans.slowest;
  assert.equal(item.label, '/slow');
  assert.deepEqual(sharesOf(item), { gc: 100 * MS, stall: 200 * MS, children: 300 * MS, cpu: 100 * MS, queued: 200 * MS, unexplained: 100 * MS });
  assert.equal(item.shares.reduce((n, s) => n + s.ns, 0), item.endNs - item.startNs);
  assert.equal(item.verdict.cause, 'children');
  assert.equal(item.verdict.text, '30 % waiting: its child `Query select 1` took 300.0 ms');
  assert.deepEqual(item.gc, { pauses: 1, ms: 100, byKind: { 'mark-compact': 1 }, longestMs: 100, longestKind: 'mark-compact' });
  assert.deepEqual({ ...item.stalls, functions: undefined }, { stalls: 1, ms: 250, functions: undefined });
  assert.deepEqual({ count: item.children.count, ms: item.children.ms, selfMs: item.children.selfMs, first: item.children.top[0].label }, { count: 1, ms: 300, selfMs: 700, first: 'select 1' });
  assert.deepEqual({ ...item.concurrency, longestBefore: item.concurrency.longestBefore.label }, { running: 1, before: 1, beforeMs: 900, longestBefore: '/earlier' });
  assert.equal(item.cpu.sampled, true);
  assert.equal(item.cpu.samples, 1000);
  assert.equal(item.cpu.onCpuMs, 200);
  assert.equal(item.cpu.offCpuMs, 800);
  assert.deepEqual(item.cpu.functions[0], { function: 'work (app.js:3)', caller: 'handle (app.js:10)', selfMs: 200, selfSamples: 200, percent: 20 });

  // The stall itself: GC first, then CPU (none: idle samples), the rest blocked with no CPU sample.
  const [s] = report.stalls.items;
  assert.deepEqual([s.startNs, s.endNs], [at(350), at(600)]);
  assert.deepEqual(sharesOf(s), { gc: 50 * MS, cpu: 0, unexplained: 200 * MS });
  assert.equal(s.verdict.text, '80 % blocked with no CPU sample (a synchronous system call, or the thread was not running)');

  // The text says the same, its percentages adding up to 100.0.
  const text = await explain(file, ['--span', 'Req', '--top', '1']);
  assert.match(text, /verdict: 30 % waiting: its child `Query select 1` took 300\.0 ms/);
  const rows = [...text.matchAll(/^ {5}(GC|stall|children|CPU|queued|unexplained) +([\d.]+) ms +([\d.]+) %/gm)].slice(0, 6);
  assert.deepEqual(rows.map((r) => [r[1], r[2], r[3]]), [['GC', '100.00', '10.0'], ['stall', '200.00', '20.0'], ['children', '300.00', '30.0'], ['CPU', '100.00', '10.0'], ['queued', '200.00', '20.0'], ['unexplained', '100.00', '10.0']]);
});

test('the samples the second pass keeps give the same numbers as a profile of every sample', async (t) => {
  // Two sampled threads; thread 3's interval is given by no SamplerStarted (weighed by its median gap).
  // Irregular gaps, some longer than the weight cap, and spans of many lengths.
  const rnd = seededRandom(7);
  const events = [{ type: SamplerStarted, threadId: 0, timestampNs: at(0.5), values: [0, 1000, 'native'] }, ...definitions(0.5, 0), ...definitions(0.5, 3)];
  for (const thread of [0, 3]) {
    for (let ms = 1; ms < 3000; ms += rnd() < 0.05 ? 3 + rnd() * 20 : 0.5 + rnd()) events.push(sample(ms, 1 + Math.floor(rnd() * 3), thread));
  }
  let id = 100;
  for (let i = 0; i < 40; i++) {
    const thread = rnd() < 0.5 ? 0 : 3;
    const from = 5 + rnd() * 2800;
    const to = from + rnd() * rnd() * 400;
    events.push(begin(app.Req, ++id, 0, from, `/r${i}`, thread), end(app.Req, id, to, thread));
  }
  const file = await trace(t, events);
  const report = JSON.parse(await explain(file, ['--top', '40', '--json']));
  assert.equal(report.spans.slowest.length, 40);

  const full = new CpuProfileBuilder();
  for await (const batch of readTrace(file).batches()) for (const e of batch.events) full.add(e);
  const profile = full.finish();
  const idle = idleFrames(profile);
  for (const item of report.spans.slowest) {
    const samples = profile.threads.get(item.threadId);
    const all = functionTimes(profile, [samples], item.startNs, item.endNs);
    const expected = all.functions.filter((f) => f.selfSamples > 0 && !idle.has(f.frame)).slice(0, 5).map((f) => [frameLabel(profile.frames[f.frame]), f.selfNs / MS, f.selfSamples]);
    assert.deepEqual(item.cpu.functions.map((f) => [f.function, f.selfMs, f.selfSamples]), expected, `${item.label} on thread ${item.threadId}`);
    const cover = cpuCover(profile, idle, samples, item.startNs, item.endNs);
    let onCpu = 0;
    for (let i = 0; i < cover.length; i += 2) onCpu += cover[i + 1] - cover[i];
    assert.equal(item.cpu.onCpuMs, onCpu / MS, `${item.label}: time on CPU`);
    assert.equal(item.shares.find((s) => s.cause === 'cpu').ns + item.shares.find((s) => s.cause === 'unexplained').ns, item.endNs - item.startNs - sharesOf(item).queued);
  }
});

test('without CPU samples: GC, stalls, children and queueing are still explained, and the rest says what CPU attribution needs', async (t) => {
  const file = await trace(t, [
    begin(app.Req, 1, 0, 10, '/gc'),
    gcPause(20, 80, 'mark-compact'),
    end(app.Req, 1, 110),
    begin(app.Req, 2, 0, 200, '/stalled'),
    ...stall(190, 300),
    end(app.Req, 2, 400),
    begin(app.Req, 3, 0, 500, '/waits'),
    begin(app.Query, 4, 3, 510, 'slow query'),
    end(app.Query, 4, 790),
    end(app.Req, 3, 800),
    begin(app.Req, 5, 0, 600, '/queued'),
    end(app.Req, 5, 850),
  ]);
  const report = JSON.parse(await explain(file, ['--span', 'Test.App/Req', '--json']));
  assert.equal(report.sampler.present, false);
  assert.equal(report.sampler.note, 'CPU attribution needs Runtime.CpuSampler (the trace has no CPU samples)');
  const byLabel = Object.fromEntries(report.spans.slowest.map((i) => [i.label, i]));
  assert.deepEqual(Object.keys(byLabel), ['/waits', '/queued', '/stalled', '/gc']);
  assert.equal(byLabel['/gc'].verdict.text, '80 % in GC: 1 mark-compact pause, longest 80.0 ms');
  assert.equal(byLabel['/stalled'].verdict.text, '100 % in an event-loop stall (CPU attribution needs Runtime.CpuSampler (the trace has no CPU samples))');
  assert.equal(byLabel['/waits'].verdict.text, '93 % waiting: its child `Query slow query` took 280.0 ms');
  assert.equal(byLabel['/queued'].verdict.text, '80 % queued behind an earlier Req still running: `Req /waits` began 100.0 ms before it and took 300.0 ms');
  for (const item of report.spans.slowest) {
    assert.equal(item.cpu.sampled, false);
    assert.equal(item.shares.find((s) => s.cause === 'cpu').ns, 0);
    assert.match(item.shares.find((s) => s.cause === 'unexplained').from, /CPU attribution needs Runtime\.CpuSampler/);
  }
  const text = await explain(file, ['--span', 'Req']);
  assert.match(text, /^CPU samples {2}none: CPU attribution needs Runtime\.CpuSampler/m);
});

test('--top, --span and --min-ms choose the items; bad options and an unknown span type are clear errors', async (t) => {
  const file = await trace(t, [
    begin(app.Req, 1, 0, 0, '/a'),
    begin(app.Query, 2, 1, 10, 'q'),
    end(app.Query, 2, 60),
    end(app.Req, 1, 100),
    begin(app.Req, 3, 0, 200, '/b'),
    end(app.Req, 3, 230),
    ...stall(300, 150),
    ...stall(500, 120),
  ]);
  const all = JSON.parse(await explain(file, ['--json']));
  assert.deepEqual(all.spans.slowest.map((i) => i.label), ['/a', 'q', '/b'], 'every span type, slowest first');
  assert.deepEqual(all.spanTypes, { 'Test.App/Req': 2, 'Test.App/Query': 1 });
  assert.deepEqual(all.stalls.items.map((s) => s.durationMs), [150, 120], 'every stall, in time order');
  const top = JSON.parse(await explain(file, ['--top', '1', '--json']));
  assert.deepEqual(top.spans.slowest.map((i) => i.label), ['/a']);
  const queries = JSON.parse(await explain(file, ['--span', 'Query', '--json']));
  assert.deepEqual([queries.spans.matching, queries.spans.slowest.map((i) => i.label)], [1, ['q']]);
  const long = JSON.parse(await explain(file, ['--min-ms', '40', '--json']));
  assert.deepEqual(long.spans.slowest.map((i) => i.label), ['/a', 'q']);
  assert.deepEqual(JSON.parse(await explain(file, ['--min-ms', '130', '--json'])).stalls.items.map((s) => s.durationMs), [150]);

  const unknown = await explainFails(file, ['--span', 'Test.App/Nope']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no span of type 'Test\.App\/Nope' in .*; its span types: Test\.App\/Req, Test\.App\/Query/);
  for (const args of [['--top', '0'], ['--top', 'x'], ['--min-ms=-1'], ['--span', '']]) {
    const r = await explainFails(file, args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /^tracepipe: (--top|--min-ms|--span) /, args.join(' '));
  }
  assert.equal((await explainFails(join(file, '..', 'missing.tptrace'), [])).code, 1);
});
