import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { ReportPageData } from 'tracepipe/export';

const require = createRequire(import.meta.url);
/** The chart library, as its package ships it (a browser global, `uPlot`), and its styles. */
const UPLOT_SCRIPT = 'uplot/dist/uPlot.iife.min.js';
const UPLOT_STYLES = 'uplot/dist/uPlot.min.css';
/** The page script (src/report-view, compiled for the browser), and the flame graph's classic script it uses. */
const VIEW_SCRIPT = new URL('../report-view/report-view.js', import.meta.url);
const FLAME_SCRIPT = new URL('../report-view/flame-graph.js', import.meta.url);
/** countOf, the scripts' one shared helper (a classic script, first). */
const COUNT_SCRIPT = new URL('../report-view/count-text.js', import.meta.url);
/** The "why it was slow" section's script, run after the page script. */
const EXPLAIN_SCRIPT = new URL('../report-view/explain-view.js', import.meta.url);

const STYLES = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #111827; background: #fff; }
header { padding: 16px 24px 8px; border-bottom: 1px solid #e5e7eb; }
h1 { font-size: 20px; margin: 0 0 4px; }
#subtitle { color: #4b5563; margin: 0; }
main { padding: 0 24px 32px; }
section { margin-top: 22px; position: relative; }
h2 { font-size: 16px; margin: 0 0 2px; }
.note { color: #4b5563; margin: 0 0 8px; font-size: 13px; }
table.sampled { border-collapse: collapse; font-size: 13px; }
table.sampled th, table.sampled td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #e5e7eb; }
table.sampled th:first-child, table.sampled td:first-child { text-align: left; }
pre { background: #f9fafb; border: 1px solid #e5e7eb; padding: 12px; overflow-x: auto; font-size: 12px; }
.explain-item { margin: 10px 0; }
.explain-item .when { color: #4b5563; font-size: 13px; }
.explain-item .verdict { margin: 2px 0 4px; }
.shares { display: flex; height: 10px; max-width: 720px; background: #f3f4f6; }
.legend span { margin-right: 14px; padding-left: 4px; font-size: 13px; }
h3 { font-size: 14px; margin: 16px 0 2px; }
.tip { position: absolute; display: none; pointer-events: none; z-index: 10; background: #111827; color: #f9fafb; padding: 4px 8px; border-radius: 4px; font-size: 12px; white-space: nowrap; }
`;

/** Text put inside a <script> or <style> element must not end it early. */
function inlined(text: string, what: string): string {
  if (/<\/(script|style)/i.test(text)) throw new Error(`${what} contains a closing tag and cannot be inlined`);
  return text;
}

const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `tracepipe report --html`: one self-contained page. uPlot and its styles are read from the
 * installed package and inlined with the page scripts and the data, so the page opens from disk
 * with no network (its Content-Security-Policy forbids any request).
 */
export async function renderReportPage(data: ReportPageData): Promise<string> {
  const [uplotScript, uplotStyles, view, flame, explainView, countText] = await Promise.all([
    readFile(require.resolve(UPLOT_SCRIPT), 'utf8'),
    readFile(require.resolve(UPLOT_STYLES), 'utf8'),
    readFile(VIEW_SCRIPT, 'utf8'),
    readFile(FLAME_SCRIPT, 'utf8'),
    readFile(EXPLAIN_SCRIPT, 'utf8'),
    readFile(COUNT_SCRIPT, 'utf8'),
  ]);
  // JSON in a script element: every '<' escaped, so no string in the trace can close it.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>tracepipe report: ${escapeHtml(data.title)}</title>
<style>${inlined(uplotStyles, UPLOT_STYLES)}</style>
<style>${STYLES}</style>
</head>
<body>
<header><h1>tracepipe report: ${escapeHtml(data.title)}</h1><p id="subtitle"></p></header>
<main id="report"></main>
<script id="tracepipe-data" type="application/json">${json}</script>
<script>${inlined(uplotScript, UPLOT_SCRIPT)}</script>
<script>${inlined(countText, 'the count script')}</script>
<script>${inlined(flame, 'the flame graph script')}</script>
<script type="module">${inlined(view, 'the page script')}</script>
<script type="module">${inlined(explainView, 'the explain section script')}</script>
</body>
</html>
`;
}
