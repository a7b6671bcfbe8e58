// One run of the report-html benchmark, in its own process: `report-one.mjs html|text TRACE OUT.html`,
// the `tracepipe report` command itself (with --html OUT.html, or the text report as the peer). Its
// own output goes first; the result is the last line.
import { reportCommand } from '../../dist/cli/report-command.js';
import { reportResult } from '../support/variant-process.mjs';

const [variant, trace, out] = process.argv.slice(2);
const t0 = performance.now();
const code = await reportCommand(variant === 'html' ? [trace, '--html', out] : [trace]);
reportResult({ code, wallMs: performance.now() - t0, maxRssMB: process.resourceUsage().maxRSS / 1024 });
