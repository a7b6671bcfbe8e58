// The HTML report's flame graph in a real browser (headless Chromium, helpers/report-page.mjs): the
// bars drawn, the thread chosen, hover and click, against the samples read back from the trace with
// `tracepipe dump` and against `report --json`'s CPU section (the same numbers in every view), on a
// trace written by hand (helpers/cpu-report-trace.mjs); test/report-html.test.mjs draws a real one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeEventLoop } from '../dist/index.js';
import { cli, dumpJsonl } from './helpers/convert-helpers.mjs';
import { knownCpuTrace } from './helpers/cpu-report-trace.mjs';
import { chromiumPath, hoverFlameBar, openPage } from './helpers/report-page.mjs';

let dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-report-flame-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Self samples per innermost function name of `thread`, resolving the dump's frame and stack ids per writing thread. */
function selfSamplesFromDump(events, thread) {
  const frames = new Map();
  const stacks = new Map();
  const out = {};
  for (const e of events) {
    if (e.provider !== 'Runtime.CpuSampler') continue;
    const key = (id) => `${e.threadId}:${id}`;
    if (e.name === 'Frame') frames.set(key(e.fields.frameId), e.fields.functionName);
    else if (e.name === 'Stack') stacks.set(key(e.fields.stackId), e.fields.frameId);
    else if (e.name === 'Sample' && e.fields.thread === thread && stacks.has(key(e.fields.stackId))) {
      const name = frames.get(key(stacks.get(key(e.fields.stackId))));
      out[name] = (out[name] ?? 0) + 1;
    }
  }
  return out;
}

async function clickBar(page, node) {
  const r = await page.evaluate((n) => window.tracepipeReport.flameGraph.rectOf(n), node);
  await page.mouse.click(r.x + r.width / 2, r.y + r.height / 2);
  return page.evaluate(() => ({ zoomed: window.tracepipeReport.flameGraph.zoomedNode, bars: window.tracepipeReport.drawn.flameFrames, details: document.getElementById('flame-details').textContent }));
}

test('the flame graph of two sampled threads: every bar drawn, hover tells self and total time as report --json does, click zooms, the thread can be chosen', { timeout: 300_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const file = join(dir, 'cpu.tptrace');
  await knownCpuTrace(file, { runtimeEventLoop });
  const html = join(dir, 'cpu.html');
  const made = await cli(['report', file, '--html', html]);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /1,900 CPU samples/);
  const json = JSON.parse((await cli(['report', file, '--json'])).stdout);
  const fromDump = selfSamplesFromDump((await dumpJsonl(file)).events, 0);
  const png = join(dir, 'cpu.png');
  const got = await openPage(executablePath, html, png, async (page) => {
    const data = await page.evaluate(() => window.tracepipeReport.data.cpu);
    const nodeOf = (thread, name) => data.threads.find((x) => x.thread === thread).nodes.function.findIndex((f) => data.functions[f] === name);
    const first = await page.evaluate(() => ({ thread: window.tracepipeReport.flameGraph.thread, bars: window.tracepipeReport.drawn.flameFrames }));
    const busy = nodeOf(0, 'busyLoop (app.js:12)');
    const tip = await hoverFlameBar(page, busy);
    const main = await hoverFlameBar(page, nodeOf(0, 'main (app.js:1)'));
    const zoom = await clickBar(page, busy);
    const out = await clickBar(page, -1);
    await page.selectOption('#flame-thread', '1');
    const worker = await page.evaluate(() => ({ thread: window.tracepipeReport.flameGraph.thread, bars: window.tracepipeReport.drawn.flameFrames, note: document.getElementById('flame-note').textContent }));
    const format = await hoverFlameBar(page, nodeOf(1, 'format (worker.js:20)'));
    return { first, tip, main, zoom, out, worker, format };
  });
  assert.deepEqual(got.errors, [], 'no console errors');
  assert.deepEqual(got.requests, [], 'no requests but the page itself');
  assert.ok(got.report.charts.includes('CPU: flame graph'));
  const i = got.interaction;
  // The busiest thread first: the top bar, main, handler, stringify, busyLoop, idle, the garbage collector.
  assert.deepEqual(i.first, { thread: 0, bars: 7 });
  const row = (thread, name) => json.cpu.threads.find((x) => x.thread === thread).bySelf.find((r) => r.function === name) ?? json.cpu.threads.find((x) => x.thread === thread).byTotal.find((r) => r.function === name);
  const busyRow = row(0, 'busyLoop (app.js:12)');
  assert.equal(fromDump.busyLoop, busyRow.selfSamples, 'report --json counts the samples the dump holds');
  assert.deepEqual(i.tip.slice(0, 2), ['busyLoop (app.js:12)', `self ${busyRow.selfMs.toFixed(2)} ms (${busyRow.selfPercent.toFixed(1)} %, ${busyRow.selfSamples} samples) · total ${busyRow.totalMs.toFixed(2)} ms (${busyRow.totalPercent.toFixed(1)} %, ${busyRow.totalSamples} samples)`]);
  assert.equal(i.tip[2], 'file:///srv/app.js');
  const mainRow = row(0, 'main (app.js:1)');
  assert.match(i.main[1], new RegExp(`self 0\\.00 ms \\(0\\.0 %, 0 samples\\) · total ${mainRow.totalMs.toFixed(2)} ms \\(${mainRow.totalPercent.toFixed(1)} %, ${mainRow.totalSamples} samples\\)`));
  // Zoomed into busyLoop: the top bar and main above it, busyLoop at the full width; the figures stay under the graph.
  assert.equal(i.zoom.bars, 3);
  assert.match(i.zoom.details, /busyLoop \(app\.js:12\) — self 290\.00 ms \(29\.0 %, 290 samples\)/);
  assert.deepEqual([i.out.zoomed, i.out.bars], [-1, 7]);
  // The worker: workerMain, parse, render, render, format, idle, the sample with no stack, and the top bar.
  assert.deepEqual([i.worker.thread, i.worker.bars], [1, 8]);
  assert.match(i.worker.note, /Thread 1: 900 samples, 900\.00 ms sampled\. 1 sample has no stack \(the trace does not define it/);
  const formatRow = row(1, 'format (worker.js:20)');
  assert.match(i.format[1], new RegExp(`^self ${formatRow.selfMs.toFixed(2)} ms \\(${formatRow.selfPercent.toFixed(1)} %, 200 samples\\)`));
});

test('without CPU samples the page says how to get them, and draws no flame graph', { timeout: 300_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const { CpuTraceBuilder } = await import('./helpers/cpu-report-trace.mjs');
  const file = join(dir, 'none.tptrace');
  const b = new CpuTraceBuilder();
  b.add(runtimeEventLoop.StallStart, 2, 400e6, [0, 100]);
  b.add(runtimeEventLoop.StallEnd, 2, 600e6, [0, 300]);
  await b.write(file, [runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd]);
  const html = join(dir, 'none.html');
  assert.equal((await cli(['report', file, '--html', html])).code, 0);
  const got = await openPage(executablePath, html, join(dir, 'none.png'), (page) => page.evaluate(() => [...document.querySelectorAll('h2')].find((h) => h.textContent === 'CPU: flame graph').nextElementSibling.textContent));
  assert.deepEqual(got.errors, []);
  assert.equal(got.report.flameGraph, false);
  assert.equal(got.report.drawn.flameFrames, 0);
  assert.match(got.interaction, /No CPU samples in this trace \(enable Runtime\.CpuSampler/);
});
