import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../support/runtime-trace.mjs', import.meta.url));
const ONE = fileURLToPath(new URL('./report-one.mjs', import.meta.url));
const OPEN = fileURLToPath(new URL('./open-page.mjs', import.meta.url));
const N = 10_000_000;
const ROUNDS = 3;
const OPEN_TARGET_MS = 3000;

export const description = 'issue 15: tracepipe report --html on a 10,000,000-event trace: generation time (vs the text report), page size, and how fast headless Chromium opens it';

function chromiumPath() {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

export async function run() {
  const dir = join(ROOT, '.bench-tmp', 'report-html');
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'ten-million.tptrace');
  const html = join(dir, 'ten-million.html');
  try {
    const made = await runVariant(PRODUCER, [String(N), trace], { timeoutMs: 300_000 });
    console.log(`the trace: ${made.eventsWritten.toLocaleString('en-US')} events (${N.toLocaleString('en-US')} Bench.App/Tick and the runtime providers'), ${(made.bytesWritten / 1e6).toFixed(1)} MB`);
    console.log(`${ROUNDS} rounds, each in its own process, order rotating: \`report --html\` and the text \`report\` (its peer: the same pass without charts)`);
    const runs = await interleavedRounds(ROUNDS, ['html', 'text'], (v) => runVariant(ONE, [v, trace, html], { timeoutMs: 600_000 }));
    const gen = summarize(runs.html.map((r) => r.wallMs / 1000));
    const ratio = summarize(runs.html.map((r, i) => r.wallMs / runs.text[i].wallMs));
    row('report --html: seconds', formatSummary(gen, 2));
    row('text report: seconds', formatSummary(summarize(runs.text.map((r) => r.wallMs / 1000)), 2));
    row('--html / text (per round)', `${formatSummary(ratio, 2)}x`);
    row('peak RSS, --html (max over rounds)', `${Math.max(...runs.html.map((r) => r.maxRssMB)).toFixed(0)} MB`);
    row('page size', `${(statSync(html).size / 1024).toFixed(0)} KiB`);
    const checks = [{ check: 'report --html: generation time, 10 M-event trace', value: `${gen.median.toFixed(2)} s (${ratio.median.toFixed(2)}x the text report)`, met: null }];
    const chromium = chromiumPath();
    if (!chromium) {
      console.log('  chromium is not installed (Debian package chromium): the page is not opened');
      return checks;
    }
    const opened = await runVariant(OPEN, [chromium, html, String(ROUNDS)], { timeoutMs: 300_000 });
    const ready = summarize(opened.opens.map((o) => o.readyMs));
    row('headless Chromium: load event (ms since navigation)', formatSummary(summarize(opened.opens.map((o) => o.loadEventMs)), 0));
    row('headless Chromium: every chart drawn (ms)', formatSummary(ready, 0));
    row('  of which the page script (ms)', formatSummary(summarize(opened.opens.map((o) => o.scriptMs)), 0));
    row('console errors', opened.errors.length === 0 ? 'none' : opened.errors.join(' | '));
    checks.push({ check: 'report --html: page opens (every chart drawn), 10 M-event trace', value: `${ready.median.toFixed(0)} ms`, target: `< ${OPEN_TARGET_MS} ms`, met: ready.max < OPEN_TARGET_MS && opened.errors.length === 0 });
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
