// `tracepipe report` on CPU samples (Runtime.CpuSampler): the CPU section (top functions by self and
// total time per sampled thread, lost and unresolved samples, restarts) and, for each stall and each
// of the slowest spans, the functions on CPU during it. The trace is written by hand
// (helpers/cpu-report-trace.mjs), so every figure is known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runtimeEventLoop } from '../dist/index.js';
import { readReport } from '../dist/cli/trace-report.js';
import { ReportCharts } from '../dist/cli/report/report-charts.js';
import { cli } from './helpers/convert-helpers.mjs';
import { knownCpuTrace } from './helpers/cpu-report-trace.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const close = (a, b) => Math.abs(a - b) < 1e-9;
const rows = (list) => list.map((r) => [r.function, r.selfSamples, r.totalSamples]);

async function known(t) {
  const file = join(await tempDir(t), 'cpu.tptrace');
  await knownCpuTrace(file, { runtimeEventLoop });
  return file;
}

test('report --json: top functions by self and total time per sampled thread, with lost, unresolved samples and restarts', async (t) => {
  const file = await known(t);
  const r = await cli(['report', file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const cpu = JSON.parse(r.stdout).cpu;
  assert.equal(cpu.samples, 1900);
  assert.ok(close(cpu.sampledMs, 1900));
  assert.deepEqual([cpu.unresolvedSamples, cpu.lostSamples, cpu.lost, cpu.restarts], [1, 7, { 'buffer-full': 7 }, 1]);
  const [main, worker] = cpu.threads;
  assert.deepEqual([main.thread, main.samples, main.intervalUs, worker.thread, worker.samples], [0, 1000, 1000, 1, 900]);
  // The stall's samples were written by the watchdog (thread 2) with its own ids: the same functions.
  assert.deepEqual(rows(main.bySelf), [['stringify', 400, 400], ['(idle)', 300, 300], ['busyLoop (app.js:12)', 290, 290], ['(garbage collector)', 10, 10]], 'functions with self time only');
  assert.deepEqual(rows(main.byTotal), [['main (app.js:1)', 0, 690], ['stringify', 400, 400], ['handler (app.js:30)', 0, 400], ['(idle)', 300, 300], ['busyLoop (app.js:12)', 290, 290], ['(garbage collector)', 10, 10]]);
  const busy = main.bySelf[2];
  assert.deepEqual([busy.functionName, busy.url, busy.line, busy.column], ['busyLoop', 'file:///srv/app.js', 12, 3]);
  assert.ok(close(busy.selfMs, 290) && close(busy.selfPercent, 29) && close(main.byTotal[0].totalPercent, 69));
  // Recursion counts once per sample in a total; the unresolved sample is time of the thread, in no function.
  assert.deepEqual(rows(worker.byTotal), [['workerMain (worker.js:1)', 0, 800], ['parse (worker.js:5)', 600, 600], ['format (worker.js:20)', 200, 200], ['render (worker.js:9)', 0, 200], ['(idle)', 99, 99]]);
  assert.ok(close(worker.sampledMs, 900) && close(worker.bySelf[0].selfPercent, 600 / 9));
});

test('report --json: each stall and each of the slowest spans names what its thread ran during it', async (t) => {
  const file = await known(t);
  const r = JSON.parse((await cli(['report', file, '--json'])).stdout);
  const [stall] = r.stalls.longest;
  assert.equal(stall.thread, 0);
  const c = stall.onCpu;
  assert.deepEqual([c.threadSampled, c.samples, c.otherFunctions, c.noStackMs], [true, 300, 0, 0]);
  assert.ok(close(c.sampledMs, 300) && close(c.intervalMs, 300));
  assert.deepEqual(c.functions.map((f) => [f.function, f.samples, f.selfMs]), [['busyLoop (app.js:12)', 290, 290], ['(garbage collector)', 10, 10]]);
  assert.ok(close(c.functions[0].percent, 2900 / 30));
  const slowest = r.spans.slowest;
  assert.deepEqual(slowest.map((s) => [s.span, s.threadId, s.startNs, s.durationMs]), [['Test.App/Request', 1, 650e6, 200], ['Test.App/Request', 0, 600e6, 10]]);
  // The worker's span: on the worker's samples only, though the main thread ran meanwhile.
  assert.deepEqual(slowest[0].onCpu.functions.map((f) => [f.function, f.samples]), [['format (worker.js:20)', 150], ['parse (worker.js:5)', 50]]);
  assert.ok(close(slowest[0].onCpu.functions[0].percent, 75));
  assert.deepEqual(slowest[1].onCpu.functions.map((f) => [f.function, f.samples, f.percent]), [['stringify', 10, 100]]);
});

test('report: the CPU section and the "on CPU" lines as printed', async (t) => {
  const file = await known(t);
  const r = await cli(['report', file]);
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, /CPU samples \(Runtime\.CpuSampler\): 1,900 samples, 1900\.00 ms sampled on 2 threads/);
  assert.match(out, /7 samples lost \(buffer-full: 7\)/);
  assert.match(out, /1 sample with a stack the trace does not define/);
  assert.match(out, /the sampler was restarted 1 time/);
  assert.match(out, /thread 0: 1,000 samples \(interval 1000 µs\), 1000\.00 ms sampled/);
  assert.match(out, /\n\s+400\.00 ms\s+40\.0%\s+400\s+400\.00 ms\s+40\.0%\s+400\s+stringify\n/);
  assert.match(out, /\n\s+0\.00 ms\s+0\.0%\s+0\s+690\.00 ms\s+69\.0%\s+690\s+main \(app\.js:1\)\n/);
  // Right under the stall, and under each slowest span.
  assert.match(out, /ended\s+0\.600000 s\s+thread 0\s+300\.00 ms\n\s+on CPU \(300 samples, 300\.00 of 300\.00 ms sampled\): busyLoop \(app\.js:12\) 97 %, \(garbage collector\) 3 %\n/);
  assert.match(out, /slowest 2:\n\s+began\s+0\.650000 s\s+thread 1\s+200\.00 ms\s+Test\.App\/Request\n\s+on CPU \(200 samples, 200\.00 of 200\.00 ms sampled\): format \(worker\.js:20\) 75 %, parse \(worker\.js:5\) 25 %\n/);
});

test('report: without CPU samples the section says so, and stalls carry no "on CPU"', async (t) => {
  const { CpuTraceBuilder } = await import('./helpers/cpu-report-trace.mjs');
  const file = join(await tempDir(t), 'no-cpu.tptrace');
  const b = new CpuTraceBuilder();
  b.add(runtimeEventLoop.StallStart, 2, 400e6, [0, 100]);
  b.add(runtimeEventLoop.StallEnd, 2, 600e6, [0, 300]);
  await b.write(file, [runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd]);
  const json = JSON.parse((await cli(['report', file, '--json'])).stdout);
  assert.equal(json.cpu, undefined);
  assert.equal(json.stalls.longest[0].onCpu, undefined);
  const text = (await cli(['report', file])).stdout;
  assert.match(text, /CPU samples \(Runtime\.CpuSampler\): none recorded/);
  assert.doesNotMatch(text, /on CPU/);
});

test('the HTML report\'s flame graph data: each sampled thread\'s call tree, depth first, the heaviest child first, with the figures of the text report', async (t) => {
  const file = await known(t);
  const charts = new ReportCharts();
  const options = { infoMs: 10, warnMs: 50 };
  const { report, profile } = await readReport(file, options, (b) => charts.add(b));
  const { cpu } = charts.data(file, report, '', options, profile);
  assert.deepEqual(cpu.threads.map((x) => x.thread), [0, 1]);
  const worker = cpu.threads[1];
  const n = worker.nodes;
  const name = (i) => cpu.functions[n.function[i]];
  assert.deepEqual(
    n.function.map((_, i) => [name(i), n.parent[i], n.selfSamples[i], n.totalSamples[i]]),
    [['workerMain (worker.js:1)', -1, 0, 800], ['parse (worker.js:5)', 0, 600, 600], ['render (worker.js:9)', 0, 0, 200], ['render (worker.js:9)', 2, 0, 200], ['format (worker.js:20)', 3, 200, 200], ['(idle)', -1, 99, 99]],
  );
  assert.deepEqual([worker.samples, worker.noStackSamples, worker.omittedNodes], [900, 1, 0]);
  assert.ok(close(worker.sampledMs, 900) && close(worker.noStackMs, 1) && close(n.totalMs[0], 800));
  // The per-function figures are the text report's.
  const byFunction = Object.fromEntries(worker.functions.function.map((f, i) => [cpu.functions[f], [worker.functions.selfMs[i], worker.functions.totalMs[i]]]));
  for (const row of report.cpu.threads[1].byTotal) assert.deepEqual(byFunction[row.function], [row.selfMs, row.totalMs], row.function);
  assert.equal(cpu.urls[n.function[0]], 'file:///srv/worker.js');
});

test('report: a frame of a source-mapped script is named at its original location in every view, and --no-source-maps keeps the generated one', async (t) => {
  const { CpuTraceBuilder, frame } = await import('./helpers/cpu-report-trace.mjs');
  const dir = await tempDir(t);
  // A compiled script and its map beside it: generated line 1, column 1 is hotPath at orig.ts line 3, column 5.
  const script = join(dir, 'gen.js');
  await writeFile(script, 'function a(){for(;;);}\n');
  await writeFile(`${script}.map`, JSON.stringify({ version: 3, sources: ['orig.ts'], names: ['hotPath'], mappings: 'AAEIA' }));
  const file = join(dir, 'mapped.tptrace');
  const b = new CpuTraceBuilder();
  b.started(0, 0, 1000);
  b.run(0, [frame('a', pathToFileURL(script).href, 1, 1)], 0, 50e6, 1e6);
  b.add(runtimeEventLoop.StallStart, 2, 30e6, [0, 10]);
  b.add(runtimeEventLoop.StallEnd, 2, 45e6, [0, 25]);
  await b.write(file, [runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd]);
  const mapped = JSON.parse((await cli(['report', file, '--json'])).stdout);
  assert.equal(mapped.cpu.threads[0].bySelf[0].function, 'hotPath (orig.ts:3)');
  assert.deepEqual([mapped.cpu.threads[0].bySelf[0].line, mapped.cpu.threads[0].bySelf[0].column], [3, 5]);
  assert.equal(mapped.stalls.longest[0].onCpu.functions[0].function, 'hotPath (orig.ts:3)');
  assert.deepEqual(mapped.cpu.sourceMaps, ['1 frame of 1 script shown at their original location through source maps']);
  const text = (await cli(['report', file])).stdout;
  assert.match(text, /1 frame of 1 script shown at their original location through source maps/);
  assert.match(text, /on CPU \(25 samples, 25\.00 of 25\.00 ms sampled\): hotPath \(orig\.ts:3\) 100 %/);
  const charts = new ReportCharts();
  const options = { infoMs: 10, warnMs: 50 };
  const { report, profile } = await readReport(file, options, (x) => charts.add(x));
  assert.deepEqual(charts.data(file, report, '', options, profile).cpu.functions, ['hotPath (orig.ts:3)'], 'the flame graph names it the same');
  const generated = JSON.parse((await cli(['report', file, '--json', '--no-source-maps'])).stdout);
  assert.equal(generated.cpu.threads[0].bySelf[0].function, 'a (gen.js:1)');
  assert.deepEqual(generated.cpu.sourceMaps, []);
});
