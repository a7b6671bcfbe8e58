// One run of the 10,000,000-event benchmark, in its own process: write, stop, then take the file apart.
// `producer.mjs N [FILE [MODE]]` keeps the trace at FILE (the convert benchmark reads it); otherwise it is
// removed. MODE is the session's buffering mode, drop (the default: what this benchmark measures) or
// block (every event kept: the convert benchmark's trace holds exactly N).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSession } from '../../dist/index.js';
import { bench, PROVIDERS, TICK_PAYLOAD_BYTES } from '../support/tick-provider.mjs';
import { traceAnatomy } from '../support/trace-anatomy.mjs';
import { reportResult } from '../support/variant-process.mjs';

const N = Number(process.argv[2]);
const keep = process.argv[3];
const mode = process.argv[4] ?? 'drop';
const E = bench.Tick;
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
try {
  const file = keep ?? join(dir, 'ten-million.tptrace');
  const session = await startSession({ providers: PROVIDERS, output: file, bufferingMode: mode });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    if (E.enabled) E.write(1.5, 2.5, i, -4);
  }
  const t1 = process.hrtime.bigint();
  const r = await session.stop();
  const t2 = process.hrtime.bigint();
  const a = traceAnatomy(file);
  if (a.payloadBytes !== a.events * TICK_PAYLOAD_BYTES) throw new Error(`payload bytes ${a.payloadBytes} != ${a.events} x ${TICK_PAYLOAD_BYTES}`);
  reportResult({
    attempted: N,
    produceMs: Number(t1 - t0) / 1e6,
    stopMs: Number(t2 - t1) / 1e6,
    wallMs: Number(t2 - t0) / 1e6,
    eventsWritten: r.eventsWritten,
    eventsDropped: r.eventsDropped,
    bytesWritten: r.bytesWritten,
    anatomy: a,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
