// Writes the trace the query and report benchmarks read: `runtime-trace.mjs N FILE`. N `Bench.App/Tick`
// events (block mode: every one reaches the file) from a main thread that also does what the runtime
// providers describe: it allocates (GC pauses, heap figures), yields every so often (event-loop delay)
// and blocks its loop now and then (stalls). Prints the session result as JSON.
import { startSession } from '../../dist/index.js';
import { bench } from './tick-provider.mjs';
import { reportResult } from './variant-process.mjs';

const [n, file] = process.argv.slice(2);
const N = Number(n);
const SLICE = 20_000;
const E = bench.Tick;

const session = await startSession({
  providers: 'Bench.App,Runtime.GC,Runtime.GCHeap:0x3:5:IntervalSec=0.1,Runtime.EventLoop:0x3:5:IntervalSec=0.1;StallMs=50,Runtime.Process',
  output: file,
  bufferingMode: 'block',
});
const t0 = performance.now();
let garbage = [];
for (let i = 0, slice = 0; i < N; slice++) {
  const end = Math.min(N, i + SLICE);
  for (; i < end; i++) E.write(1.5, 2.5, i, -4);
  // Young garbage for scavenges, and a survivor now and then for mark-compacts.
  for (let k = 0; k < 50_000; k++) garbage.push({ k, s: `g${k}` });
  if (slice % 25 === 24) garbage = [];
  // A blocked loop (a stall over StallMs) every 40 slices; otherwise the loop turns.
  if (slice % 100 === 99) {
    const until = performance.now() + 80;
    while (performance.now() < until);
  }
  await new Promise((r) => setImmediate(r));
}
const r = await session.stop();
reportResult({ attempted: N, wallMs: performance.now() - t0, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped, bytesWritten: r.bytesWritten, kept: garbage.length });
