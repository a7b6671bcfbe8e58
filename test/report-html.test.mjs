// `tracepipe report --html` in a real browser: headless Chromium (Debian package `chromium`, installed
// by .ci/run) driven by playwright-core opens the page of a real traced workload (the TypeScript
// compiler type-checking this repository) and of the fixture trace with forced drops. No console
// error, no request, and what the charts drew equals the trace (`tracepipe stats` and `dump`); the
// flame graph's tooltip on the hottest function gives `report --json`'s figures. A screenshot goes to
// the test's temp dir; TRACEPIPE_UPDATE_SCREENSHOT=1 also writes docs/report.png and
// docs/report-flame-graph.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, countByKey, dumpJsonl, richTrace } from './helpers/convert-helpers.mjs';
import { chromiumPath, flameGraphPicture, hoverFlameBar, openPage } from './helpers/report-page.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WORKLOAD = fileURLToPath(new URL('./fixtures/tsc-workload.mjs', import.meta.url));
const PROVIDERS = 'Runtime.GC,Runtime.GCHeap:0x3:5:IntervalSec=0.05,Runtime.EventLoop:0x3:5:IntervalSec=0.05;StallMs=20,Runtime.Process,Runtime.CpuSampler';

let dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-report-html-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** The page of `file` and the trace's own account of it (stats, dump). */
async function pageOf(t, executablePath, file, name, interact) {
  const html = join(dir, `${name}.html`);
  const r = await cli(['report', file, '--html', html], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const stats = JSON.parse((await cli(['stats', file, '--json'])).stdout);
  const dump = await dumpJsonl(file);
  const png = join(dir, `${name}.png`);
  const page = await openPage(executablePath, html, png, interact);
  t.diagnostic(`${name}: screenshot ${png}, page loaded in ${page.loadMs.toFixed(0)} ms, rendered in ${page.report.renderedMs.toFixed(0)} ms`);
  return { stats, dump, page, png };
}

/** Stalls whose StallStart has no StallEnd after it on the same thread (a drop may have taken either). */
function stallsOpenAtEnd(events) {
  const open = new Map();
  for (const e of events) {
    if (e.provider !== 'Runtime.EventLoop') continue;
    if (e.name === 'StallStart') open.set(e.fields.thread, true);
    else if (e.name === 'StallEnd') open.set(e.fields.thread, false);
  }
  return [...open.values()].filter(Boolean).length;
}

/** The charts hold the trace: every pause (time, duration, kind), every stall, every drop range; and nothing went wrong or out. */
function assertPageMatches({ stats, dump, page }) {
  assert.deepEqual(page.errors, [], 'no console errors');
  assert.deepEqual(page.requests, [], 'no requests but the page itself');
  const n = countByKey(dump.events);
  const { drawn, data } = page.report;
  assert.equal(drawn.gcPauseBars, n['Runtime.GC/GCPause'] ?? 0, 'a bar per GCPause event');
  assert.equal(drawn.stallSpans, n['Runtime.EventLoop/StallEnd'] ?? 0, 'a span per StallEnd event');
  assert.equal(drawn.unfinishedStallSpans, stallsOpenAtEnd(dump.events), 'a span per stall still going at the end');
  assert.equal(drawn.dropMarkers, stats.drops.length + stats.dropRangesOmitted, 'a marker per drop range');
  const pauses = dump.events.filter((e) => e.provider === 'Runtime.GC' && e.name === 'GCPause');
  const fromTrace = pauses.map((e) => `${(e.timestampNs / 1e9).toFixed(9)} ${Number(e.fields.durationNs) / 1e6} ${e.fields.kind}`).sort();
  const fromPage = data.pauses.startS.map((s, i) => `${s.toFixed(9)} ${data.pauses.durationMs[i]} ${data.pauses.kinds[data.pauses.kind[i]]}`).sort();
  assert.deepEqual(fromPage, fromTrace, 'every pause at its time, with its duration and kind');
  const drops = stats.drops.map((d) => `${d.threadId}:${d.count}`).sort();
  assert.deepEqual(data.drops.thread.map((t, i) => `${t}:${data.drops.count[i]}`).sort(), drops, 'every drop range, on its thread, with its count');
  assert.equal(data.report.events, stats.events);
  assert.ok(page.report.charts.includes('GC pauses') && page.report.charts.includes('Events per second'), page.report.charts.join(', '));
}

test('the report of a real workload (tsc type-checking this repository) opens with no error or request, and its charts hold the trace', { timeout: 300_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const file = join(dir, 'tsc.tptrace');
  const r = await cli(['collect', '--providers', PROVIDERS, '-o', file, '--', process.execPath, WORKLOAD, join(ROOT, 'tsconfig.json'), '2'], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, r.stderr);
  const { cpu } = JSON.parse((await cli(['report', file, '--json'])).stdout);
  // The function with the most self time on the main thread, its widest bar hovered: the tooltip gives report --json's figures.
  const hottest = cpu.threads.find((x) => x.thread === 0).bySelf[0];
  const got = await pageOf(t, executablePath, file, 'tsc', async (page) => {
    const shown = await page.evaluate(() => window.tracepipeReport.flameGraph.thread);
    const node = await page.evaluate((name) => {
      const { data } = window.tracepipeReport;
      const n = data.cpu.threads.find((x) => x.thread === 0).nodes;
      let best = -1;
      n.function.forEach((f, i) => {
        if (data.cpu.functions[f] === name && (best < 0 || n.totalMs[i] > n.totalMs[best])) best = i;
      });
      return best;
    }, hottest.function);
    const tip = await hoverFlameBar(page, node);
    if (process.env.TRACEPIPE_UPDATE_SCREENSHOT === '1') await flameGraphPicture(page, join(ROOT, 'docs', 'report-flame-graph.png'), node);
    return { shown, tip };
  });
  assert.ok(got.page.report.drawn.gcPauseBars > 10, 'the compiler collected garbage');
  assert.ok(got.page.report.drawn.stallSpans + got.page.report.drawn.unfinishedStallSpans > 0, 'its synchronous checks stalled the loop');
  assertPageMatches(got);
  // The compiler's own deep stacks: many bars, the main thread shown first (the only one sampled).
  assert.ok(got.page.report.drawn.flameFrames > 50, `flame graph bars: ${got.page.report.drawn.flameFrames}`);
  const { shown, tip } = got.page.interaction;
  assert.equal(shown, 0);
  assert.equal(tip[0], hottest.function);
  const text = tip.join(' ');
  assert.ok(text.includes(`self ${hottest.selfMs.toFixed(2)} ms (${hottest.selfPercent.toFixed(1)} %`) && text.includes(`total ${hottest.totalMs.toFixed(2)} ms (${hottest.totalPercent.toFixed(1)} %`), `${text} | ${JSON.stringify(hottest)}`);
  if (process.env.TRACEPIPE_UPDATE_SCREENSHOT === '1') await copyFile(got.png, join(ROOT, 'docs', 'report.png'));
});

test('the report of a trace with forced drops, a stall and pauses on three threads marks every drop range', { timeout: 300_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const { file } = await richTrace(dir);
  const got = await pageOf(t, executablePath, file, 'rich');
  assert.ok(got.stats.drops.length > 0, 'the fixture drops events');
  assertPageMatches(got);
});

/**
 * Each value axis's tick labels, as uPlot placed them: boxes measured with the axis's own font. A
 * left axis draws them right-aligned against the plot, a right axis left-aligned; the title sits
 * beyond the axis's width.
 */
async function valueAxisLabels(page) {
  return page.evaluate(() =>
    window.tracepipeReport.plots.flatMap((u, chart) =>
      u.axes.flatMap((axis, i) => {
        if (!axis._show || (axis.side !== 1 && axis.side !== 3)) return [];
        const ctx = u.ctx;
        ctx.save();
        ctx.font = axis.font[0];
        const left = axis.side === 3;
        const anchor = axis._pos + ((axis.ticks.show ? axis.ticks.size : 0) + axis.gap) * (left ? -1 : 1);
        const boxes = (axis._values ?? []).filter((v) => v != null).map((v) => {
          const w = ctx.measureText(String(v)).width / devicePixelRatio;
          return { text: String(v), left: left ? anchor - w : anchor, right: left ? anchor : anchor + w };
        });
        ctx.restore();
        const [from, to] = left ? [axis._pos - axis._size, axis._pos] : [axis._pos, axis._pos + axis._size];
        return [{ chart, axis: i, title: axis.label, from, to, canvasWidth: u.ctx.canvas.width / devicePixelRatio, boxes }];
      }),
    ),
  );
}

test('the value axes print large numbers compactly (20 M) and every tick label fits in the canvas, clear of the axis title', { timeout: 300_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const { defineProvider } = await import('../dist/index.js');
  const { writeTrace } = await import('./helpers/trace-builder.mjs');
  const { Tick } = defineProvider('Test.Rate', { events: { Tick: { id: 1, fields: [['n', 'u32']] } } });
  // 20,000 events in the first millisecond: 20,000,000 events per second in the chart's first bucket.
  const file = join(dir, 'rate.tptrace');
  await writeTrace(file, [Tick], Array.from({ length: 20_000 }, (_, i) => ({ type: Tick, threadId: 1, sequence: i, timestampNs: i * 50, values: [i] })));
  const html = join(dir, 'rate.html');
  const r = await cli(['report', file, '--html', html], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const page = await openPage(executablePath, html, join(dir, 'rate.png'), valueAxisLabels);
  assert.deepEqual(page.errors, []);
  const axes = page.interaction;
  const rates = axes.find((a) => a.title === 'events/s');
  assert.ok(rates, `the events/s axis: ${JSON.stringify(axes.map((a) => a.title))}`);
  const texts = rates.boxes.map((b) => b.text);
  assert.ok(texts.includes('20 M'), `ticks up to 20 M: ${texts.join(' | ')}`);
  for (const a of axes) {
    for (const b of a.boxes) {
      assert.match(b.text, /^-?\d+(\.\d+)?( [kMG])?$/, `compact: ${b.text}`);
      assert.ok(b.left >= Math.max(0, a.from) - 0.5 && b.right <= Math.min(a.canvasWidth, a.to) + 0.5, `${a.title}: '${b.text}' at [${b.left.toFixed(1)}, ${b.right.toFixed(1)}] within its axis [${a.from}, ${a.to}] and the canvas (0..${a.canvasWidth})`);
    }
  }
});
