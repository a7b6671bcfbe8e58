// `tracepipe report --html` in a real browser: headless Chromium (Debian package `chromium`, installed
// by .ci/run) driven by playwright-core opens the page of a real traced workload (the TypeScript
// compiler type-checking this repository) and of the fixture trace with forced drops. No console
// error, no request, and what the charts drew equals the trace (`tracepipe stats` and `dump`).
// A screenshot goes to the test's temp dir; TRACEPIPE_UPDATE_SCREENSHOT=1 also writes docs/report.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cli, countByKey, dumpJsonl, richTrace } from './helpers/convert-helpers.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WORKLOAD = fileURLToPath(new URL('./fixtures/tsc-workload.mjs', import.meta.url));
const PROVIDERS = 'Runtime.GC,Runtime.GCHeap:0x3:5:IntervalSec=0.05,Runtime.EventLoop:0x3:5:IntervalSec=0.05;StallMs=20,Runtime.Process';

let dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-report-html-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Chromium's path; fails under CI (which installs it), skips with the reason elsewhere. */
function chromiumPath(t) {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    const why = 'chromium is not installed (Debian package chromium)';
    if (process.env.CI === 'true') throw new Error(`${why}; CI must install it (.ci/run)`);
    t.skip(why);
    return undefined;
  }
}

/** Opens `html` in headless Chromium; resolves with the console errors, the requests, what the page drew, and a screenshot at `png`. */
async function openPage(executablePath, html, png) {
  const { chromium } = await import('playwright-core');
  // As root (CI, these machines) Chromium's sandbox cannot start.
  const browser = await chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [], timeout: 60_000 });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    const requests = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => requests.push(r.url()));
    const url = pathToFileURL(html).href;
    await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
    // The page script sets window.tracepipeReport when it has drawn everything; an error stops it.
    await page.waitForFunction(() => window.tracepipeReport !== undefined, null, { timeout: 60_000 }).catch((e) => {
      throw new Error(`the page did not finish drawing (${e.message}); its errors: ${errors.join(' | ') || 'none'}`);
    });
    const report = await page.evaluate(() => window.tracepipeReport);
    const timing = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
    await page.screenshot({ path: png, fullPage: true });
    return { errors, requests: requests.filter((r) => r !== url), report, loadMs: timing };
  } finally {
    await browser.close();
  }
}

/** The page of `file` and the trace's own account of it (stats, dump). */
async function pageOf(t, executablePath, file, name) {
  const html = join(dir, `${name}.html`);
  const r = await cli(['report', file, '--html', html], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const stats = JSON.parse((await cli(['stats', file, '--json'])).stdout);
  const dump = await dumpJsonl(file);
  const png = join(dir, `${name}.png`);
  const page = await openPage(executablePath, html, png);
  t.diagnostic(`${name}: screenshot ${png}, page loaded in ${page.loadMs.toFixed(0)} ms, rendered in ${page.report.renderedMs.toFixed(0)} ms`);
  return { stats, dump, page, png };
}

/** The charts hold the trace: every pause (time, duration, kind), every stall, every drop range; and nothing went wrong or out. */
function assertPageMatches({ stats, dump, page }) {
  assert.deepEqual(page.errors, [], 'no console errors');
  assert.deepEqual(page.requests, [], 'no requests but the page itself');
  const n = countByKey(dump.events);
  const { drawn, data } = page.report;
  assert.equal(drawn.gcPauseBars, n['Runtime.GC/GCPause'] ?? 0, 'a bar per GCPause event');
  assert.equal(drawn.stallSpans, n['Runtime.EventLoop/StallEnd'] ?? 0, 'a span per StallEnd event');
  assert.equal(drawn.unfinishedStallSpans, (n['Runtime.EventLoop/StallStart'] ?? 0) - (n['Runtime.EventLoop/StallEnd'] ?? 0), 'a span per stall still going at the end');
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
  const got = await pageOf(t, executablePath, file, 'tsc');
  assert.ok(got.page.report.drawn.gcPauseBars > 10, 'the compiler collected garbage');
  assert.ok(got.page.report.drawn.stallSpans + got.page.report.drawn.unfinishedStallSpans > 0, 'its synchronous checks stalled the loop');
  assertPageMatches(got);
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
