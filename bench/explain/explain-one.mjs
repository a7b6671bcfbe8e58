// One run of the explain benchmark, in its own process: `explain-one.mjs explain|skim|read TRACE`.
// explain: what `tracepipe explain TRACE` computes (its two passes and every item's attribution);
// skim: the two bare skims it is made of (the floor); read: one pass of readTrace().batches() in
// stream order, every event decoded (what a tool that decodes everything pays for one pass).
import { explainTrace } from '../../dist/analysis/explain/explain-trace.js';
import { readTrace } from '../../dist/index.js';
import { reportResult } from '../support/variant-process.mjs';

const [variant, trace] = process.argv.slice(2);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let events = 0;
let items = 0;
if (variant === 'explain') {
  const r = await explainTrace(trace, { top: 10, minMs: 0 });
  events = r.events;
  items = r.spans.slowest.length + r.stalls.items.length;
} else if (variant === 'skim') {
  for (let pass = 0; pass < 2; pass++) events = (await readTrace(trace).skim(() => {})).events;
} else {
  for await (const b of readTrace(trace).batches({ order: 'stream' })) events += b.events.length;
}
const wallMs = performance.now() - t0;
const c = process.cpuUsage(cpu0);
reportResult({ events, items, wallMs, cpuMs: (c.user + c.system) / 1000, maxRssMB: process.resourceUsage().maxRSS / 1024 });
