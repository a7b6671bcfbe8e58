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
    // Its data and counts (the flame graph object itself stays in the page).
    const report = await page.evaluate(() => ({ ...window.tracepipeReport, flameGraph: window.tracepipeReport.flameGraph !== null }));
    const timing = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
    const interaction = await interact(page);
    await page.screenshot({ path: png, fullPage: true });
    return { errors, requests: requests.filter((r) => r !== url), report, loadMs: timing, interaction };
  } finally {
    await browser.close();
  }
}
