// `report` carries explain's analysis: the same items and verdicts as `tracepipe explain` (the 10
// slowest spans of every type, every stall) in its text, its JSON and its HTML page, where each item
// links to its interval on the timeline: `#t=FROM,TO` zooms every time chart to it and marks it,
// checked in headless Chromium (Debian package `chromium`, through playwright-core).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cli } from './helpers/convert-helpers.mjs';
import { chromiumPath, openPage } from './helpers/report-page.mjs';
import { app, begin, definitions, end, gcPause, sample, SamplerStarted, stall, trace } from './helpers/explain-trace.mjs';

/** Twelve requests of different lengths, a GC pause, a child query, two stalls, CPU samples throughout. */
async function slowTrace(t) {
  const events = [{ type: SamplerStarted, threadId: 0, timestampNs: 1e6, values: [0, 1000, 'native'] }, ...definitions(1)];
  for (let i = 0; i < 12; i++) events.push(begin(app.Req, i + 1, 0, 10 + 100 * i, `/r${i}`), end(app.Req, i + 1, 10 + 100 * i + 20 + 5 * i));
  events.push(gcPause(520, 40, 'mark-compact'), begin(app.Query, 50, 12, 1115, 'q'), end(app.Query, 50, 1160), ...stall(300, 150), ...stall(700, 120));
  for (let ms = 5; ms < 1200; ms += 1) events.push(sample(ms, ms % 7 === 0 ? 2 : 3));
  return trace(t, events);
}

test('report has explain’s section: the same items and verdicts as tracepipe explain, in its text and its JSON', async (t) => {
  const file = await slowTrace(t);
  const explained = JSON.parse((await cli(['explain', file, '--json'])).stdout);
  const r = await cli(['report', file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.explain.spans, explained.spans);
  assert.deepEqual(report.explain.stalls, explained.stalls);
  assert.equal(report.explain.spans.slowest.length, 10);
  const text = (await cli(['report', file])).stdout;
  assert.match(text, /^why it was slow \(tracepipe explain FILE for every share in full\):$/m);
  for (const item of [...explained.spans.slowest, ...explained.stalls.items]) assert.ok(text.includes(`     ${item.verdict.text}\n`), item.verdict.text);
});

test('report --html: each explained item links to its place on the timeline, which zooms to it and marks it', { timeout: 120_000 }, async (t) => {
  const executablePath = chromiumPath(t);
  if (!executablePath) return;
  const file = await slowTrace(t);
  const html = join(file, '..', 'report.html');
  const r = await cli(['report', file, '--html', html]);
  assert.equal(r.code, 0, r.stderr);
  const explained = JSON.parse((await cli(['explain', file, '--json'])).stdout);
  const items = [...explained.spans.slowest, ...[...explained.stalls.items].sort((a, b) => b.durationMs - a.durationMs)];

  const url = pathToFileURL(html).href;
  const result = await openPage(executablePath, html, join(file, '..', 'report.png'), async (page) => {
    await page.waitForFunction(() => window.tracepipeExplain !== undefined, null, { timeout: 60_000 });
    const shown = await page.evaluate(() => ({ explain: window.tracepipeExplain, timeline: window.tracepipeReport.timeline, verdicts: [...document.querySelectorAll('#explain .verdict')].map((v) => v.textContent), subtitle: document.getElementById('subtitle').textContent }));
    // Following an item's link: every time chart shows its interval, with a margin, and marks it.
    await page.click('#explain .explain-item:nth-of-type(1) a');
    await page.waitForFunction(() => window.tracepipeReport.timeline.focus !== null, null, { timeout: 10_000 });
    await page.waitForFunction(() => window.tracepipeReport.timeline.charts >= 3 && window.tracepipeReport.drawn.focusMarks >= window.tracepipeReport.timeline.charts, null, { timeout: 10_000 });
    const first = await page.evaluate(() => ({ hash: location.hash, ...window.tracepipeReport.timeline }));
    // The address also works when the page opens on it.
    const stallLink = shown.explain.links[explained.spans.slowest.length];
    await page.goto(`${url}${stallLink}`, { waitUntil: 'load', timeout: 60_000 });
    await page.waitForFunction(() => window.tracepipeReport?.timeline.focus, null, { timeout: 60_000 });
    const opened = await page.evaluate(() => window.tracepipeReport.timeline.focus);
    return { shown, first, opened };
  });
  const { shown, first, opened } = result.interaction;
  // Counts agree with their nouns: one GC pause, two stalls.
  assert.match(shown.subtitle, / · 1 GC pause · 2 stalls · 0 events dropped$/);
  assert.deepEqual(shown.verdicts, items.map((i) => i.verdict.text), 'the section shows explain’s verdicts');
  assert.deepEqual(shown.explain.links, items.map((i) => `#t=${i.startNs / 1e9},${i.endNs / 1e9}`), 'each item links to its interval');
  assert.equal(shown.timeline.focus, null, 'without an address the charts show the whole trace');
  assert.equal(first.hash, shown.explain.links[0]);
  assert.deepEqual(first.focus, [items[0].startNs / 1e9, items[0].endNs / 1e9]);
  assert.ok(first.view[0] < first.focus[0] && first.view[1] > first.focus[1], `the view ${first.view} holds the item ${first.focus} with a margin`);
  assert.deepEqual(opened, [items[explained.spans.slowest.length].startNs / 1e9, items[explained.spans.slowest.length].endNs / 1e9]);
  assert.deepEqual(result.errors, [], 'no console errors');
  assert.deepEqual(result.requests.filter((q) => !q.startsWith(url)), [], 'no requests but the page itself');
});
