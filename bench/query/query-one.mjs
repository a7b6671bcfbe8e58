// One run of the query benchmark, in its own process: `query-one.mjs VARIANT TRACE`. `load` streams the
// trace into DuckDB as `tracepipe query` does (the same function) and runs a few typical statements;
// `read` is the reader alone over the same trace (the floor). Reports times and the peak RSS.
import { openTraceDatabase } from '@tracepipe/analyze';
import { readTrace } from '../../dist/index.js';
import { reportResult } from '../support/variant-process.mjs';

const [variant, trace] = process.argv.slice(2);
/** What people ask first: counts per event type, the pauses inside stalls (a join), the slowest pauses, one thread's events in time order. */
const STATEMENTS = {
  'count per event type': 'SELECT event, count(*) FROM events GROUP BY event',
  'GC pauses inside stalls (join)': `SELECT count(*) FROM "Runtime.GC/GCPause" p JOIN "Runtime.EventLoop/StallEnd" s ON p.thread = s.thread
    AND p.timestamp_ns >= s.timestamp_ns - round(s.durationMs * 1e6) AND p.timestamp_ns + p.durationNs <= s.timestamp_ns`,
  'events per 100 ms (group by)': 'SELECT timestamp_ns // 100000000 AS b, count(*) FROM events GROUP BY b',
  'sort every event by time (top 10)': 'SELECT * FROM events ORDER BY timestamp_ns DESC, sequence LIMIT 10',
};

const t0 = performance.now();
if (variant === 'read') {
  let events = 0;
  for await (const b of readTrace(trace).batches({ order: 'stream' })) events += b.events.length;
  reportResult({ events, loadMs: performance.now() - t0, maxRssMB: process.resourceUsage().maxRSS / 1024 });
} else {
  const db = await openTraceDatabase([trace]);
  const loadMs = performance.now() - t0;
  const queryMs = {};
  for (const [name, sql] of Object.entries(STATEMENTS)) {
    const q0 = performance.now();
    for await (const result of db.query(sql)) for await (const _ of result.chunks);
    queryMs[name] = performance.now() - q0;
  }
  const events = db.traces[0].events;
  await db.close();
  reportResult({ events, loadMs, queryMs, maxRssMB: process.resourceUsage().maxRSS / 1024 });
}
