// The physical limit, in its own process: `<events>` records of the session's size, timestamped with
// performance.now(), copied into a 1 MB SharedArrayBuffer ring that a worker drains to a file; the
// producer waits (Atomics.wait) while the ring is full, so nothing is lost.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { TICK_RECORD_BYTES } from '../support/tick-provider.mjs';
import { reportResult } from '../support/variant-process.mjs';
import { DATA_OFFSET, RING_BYTES, SEGMENT_BYTES, SEGMENTS, Word } from './ring-layout.mjs';

const N = Number(process.argv[2]);
const SIZE = TICK_RECORD_BYTES;
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
try {
  const path = join(dir, 'raw-ring.bin');
  const sab = new SharedArrayBuffer(DATA_OFFSET + RING_BYTES);
  const i32 = new Int32Array(sab);
  const u32 = new Uint32Array(sab);
  const f64 = new Float64Array(sab);
  const drainer = new Worker(new URL('./ring-drainer.mjs', import.meta.url), { workerData: { sab, path } });
  const done = new Promise((resolve, reject) => {
    drainer.on('error', reject);
    drainer.on('message', (m) => m.type === 'done' && resolve(m));
  });
  await new Promise((resolve) => drainer.once('message', resolve));

  let seg = 0;
  let base = DATA_OFFSET;
  let off = 0;
  let waits = 0;
  function publish() {
    i32[Word.Lengths + (seg % SEGMENTS)] = off;
    seg++;
    Atomics.store(i32, Word.Head, seg);
    Atomics.notify(i32, Word.Head);
    for (;;) {
      const tail = Atomics.load(i32, Word.Tail);
      if (seg - tail < SEGMENTS) break;
      waits++;
      Atomics.wait(i32, Word.Tail, tail);
    }
    base = DATA_OFFSET + (seg % SEGMENTS) * SEGMENT_BYTES;
    off = 0;
  }
  function write(a, b, c, d) {
    const ts = performance.now();
    if (off + SIZE > SEGMENT_BYTES) publish();
    const p = base + off;
    u32[p >> 2] = SIZE;
    u32[(p >> 2) + 1] = 1;
    f64[(p >> 3) + 1] = ts;
    f64[(p >> 3) + 2] = a;
    f64[(p >> 3) + 3] = b;
    u32[(p >> 2) + 8] = c;
    i32[(p >> 2) + 9] = d;
    off += SIZE;
  }

  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) write(1.5, 2.5, i, -4);
  const t1 = process.hrtime.bigint();
  if (off > 0) publish();
  Atomics.store(i32, Word.Done, 1);
  Atomics.notify(i32, Word.Head);
  const { bytes } = await done;
  const t2 = process.hrtime.bigint();
  const fileBytes = statSync(path).size;
  if (fileBytes !== N * SIZE || bytes !== fileBytes) throw new Error(`raw ring lost data: ${fileBytes} bytes in the file, expected ${N * SIZE}`);
  reportResult({ variant: 'raw', events: N, produceMs: Number(t1 - t0) / 1e6, wallMs: Number(t2 - t0) / 1e6, fileBytes, recordBytes: SIZE, producerWaits: waits });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
