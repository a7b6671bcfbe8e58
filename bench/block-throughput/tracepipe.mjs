// Block mode sustained to a file, in its own process: `<events>` written as fast as the 1 MB session lets.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace, startSession } from '../../dist/index.js';
import { bench, PROVIDERS, TICK_RECORD_BYTES } from '../support/tick-provider.mjs';
import { reportResult } from '../support/variant-process.mjs';

const N = Number(process.argv[2]);
const E = bench.Tick;
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
try {
  const file = join(dir, 'block.tptrace');
  const session = await startSession({ providers: PROVIDERS, output: file, bufferingMode: 'block', bufferSizeMB: 1 });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    if (E.enabled) E.write(1.5, 2.5, i, -4);
  }
  const t1 = process.hrtime.bigint();
  const r = await session.stop();
  const t2 = process.hrtime.bigint();
  const fileBytes = statSync(file).size;
  const summary = await readTrace(file).summary();
  if (summary.events !== N || summary.dropped !== 0 || r.eventsDropped !== 0) {
    throw new Error(`block mode lost events: reader ${summary.events}, reader dropped ${summary.dropped}, session dropped ${r.eventsDropped} of ${N}`);
  }
  reportResult({ variant: 'tracepipe', events: N, produceMs: Number(t1 - t0) / 1e6, wallMs: Number(t2 - t0) / 1e6, fileBytes, recordBytes: TICK_RECORD_BYTES, status: r.status });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
