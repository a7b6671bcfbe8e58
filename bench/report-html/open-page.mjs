// Opens an HTML report in headless Chromium (playwright-core) `rounds` times, each in a fresh page:
// `open-page.mjs CHROMIUM PAGE.html ROUNDS`. Reports, per open, when the load event ended and when the
// page script had drawn every chart (ms since navigation began), and any console errors.
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { reportResult } from '../support/variant-process.mjs';

const [executablePath, html, rounds] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
const opens = [];
const errors = [];
try {
  for (let i = 0; i < Number(rounds); i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load', timeout: 60_000 });
    await page.waitForFunction(() => window.tracepipeReport !== undefined, null, { timeout: 60_000 });
    opens.push(await page.evaluate(() => ({ loadEventMs: performance.getEntriesByType('navigation')[0].loadEventEnd, readyMs: window.tracepipeReport.readyAtMs, scriptMs: window.tracepipeReport.renderedMs })));
    await page.close();
  }
} finally {
  await browser.close();
}
reportResult({ opens, errors });
