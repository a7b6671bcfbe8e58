// The HTML report in a real browser: headless Chromium (Debian package `chromium`, installed by
// .ci/run) driven by playwright-core. Shared by the tests of the page's charts and of its flame graph.
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** Chromium's path; fails under CI (which installs it), skips with the reason elsewhere. */
export function chromiumPath(t) {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    const why = 'chromium is not installed (Debian package chromium)';
    if (process.env.CI === 'true') throw new Error(`${why}; CI must install it (.ci/run)`);
    t.skip(why);
    return undefined;
  }
}

/** The flame graph's tooltip lines after moving the mouse onto the middle of `node`'s bar (in the thread shown). */
export async function hoverFlameBar(page, node) {
  // The graph's frame in the window, and the bar a third of the way down the frame (a deep graph scrolls in it).
  const r = await page.evaluate((n) => {
    const graph = window.tracepipeReport.flameGraph;
    const frame = document.getElementById('flame-frame');
    frame.scrollIntoView();
    const at = graph.rectOf(n);
    if (at) frame.scrollTop += at.y - frame.getBoundingClientRect().top - frame.clientHeight / 3;
    return graph.rectOf(n);
  }, node);
  if (!r) throw new Error(`flame graph bar ${node} is not drawn`);
  await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
  return page.evaluate(() => [...document.querySelectorAll('#flame-tip > div')].map((d) => d.textContent));
}

/** A picture of the flame graph's section at `png`, from its top, with the tooltip of `node` (a bar in its first rows). */
export async function flameGraphPicture(page, png, node) {
  const r = await page.evaluate((n) => {
    const frame = document.getElementById('flame-frame');
    frame.parentElement.scrollIntoView();
    frame.scrollTop = 0;
    return window.tracepipeReport.flameGraph.rectOf(n);
  }, node);
  await page.mouse.move(r.x + r.width / 2, r.y + r.height / 2);
  const box = await page.locator('#flame-frame').locator('..').boundingBox();
  const tip = await page.locator('#flame-tip').boundingBox();
  const bottom = Math.max(box.y + box.height, tip ? tip.y + tip.height : 0) + 8;
  await page.screenshot({ path: png, clip: { x: box.x, y: box.y, width: box.width, height: bottom - box.y } });
}

/**
 * Opens `html` in headless Chromium; resolves with the console errors, the requests, what the page
 * drew, a screenshot at `png`, and what `interact(page)` (run once the page has drawn, before the
 * screenshot) resolved with.
 */
export async function openPage(executablePath, html, png, interact = async () => undefined) {
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
    // Its data and counts (the flame graph and the charts themselves stay in the page).
    const report = await page.evaluate(() => ({ ...window.tracepipeReport, flameGraph: window.tracepipeReport.flameGraph !== null, plots: window.tracepipeReport.plots.length }));
    const timing = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
    const interaction = await interact(page);
    await page.screenshot({ path: png, fullPage: true });
    return { errors, requests: requests.filter((r) => r !== url), report, loadMs: timing, interaction };
  } finally {
    await browser.close();
  }
}
