// One variant of the enabled-event benchmark, in its own process: `tracepipe`, `tracepipe-warm`, `tracepipe-ring`, `writer-only`, `writer-atomic`, `writer-closure`, `ideal`, `ideal-fresh` or `pino`.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [variant, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const WARMUP_BATCHES = 2;
const DRAIN_CATCH_UP_MS = 150;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Per batch: wall ns/op, and the main thread's on-CPU ns/op (runnable-but-waiting time excluded).
 * Returns the median batch of each. `pauseMs` between batches lets a session's drain catch up.
 */
async function measure(loop, pauseMs = 0) {
  for (let w = 0; w < WARMUP_BATCHES; w++) {
    loop(ITERS);
    if (pauseMs) await sleep(pauseMs);
  }
  const wall = [];
  const cpu = [];
  for (let b = 0; b < BATCHES; b++) {
    if (pauseMs && b > 0) await sleep(pauseMs);
    const c0 = threadCpu();
    const t0 = process.hrtime.bigint();
    loop(ITERS);
    const t1 = process.hrtime.bigint();
    const c1 = threadCpu();
    wall.push(Number(t1 - t0) / ITERS);
    if (c0 && c1) cpu.push((c1.runNs - c0.runNs) / ITERS);
  }
  return { nsPerOp: median(wall), cpuNsPerOp: cpu.length ? median(cpu) : null, batches: wall };
}

/**
 * `warm` false: the batches run back to back into a fresh 256 MB buffer, so the producer keeps
 * taking chunks it has never touched (first-touch page faults) while the drain lags behind.
 * `warm` true: the drain catches up between batches (a pause, not timed); freed chunks go back on
 * top of the free stack, so each batch reuses memory already touched, as in a long-running process.
 */
async function tracepipe(warm, ring = false) {
  const { startSession } = await import('../../dist/index.js');
  const { bench, PROVIDERS, TICK_RECORD_BYTES } = await import('../support/tick-provider.mjs');
  const E = bench.Tick;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
  try {
    const bufferSizeMB = 256;
    // Even if the drain freed nothing, every write of this run fits in the buffer.
    const total = (WARMUP_BATCHES + BATCHES) * ITERS;
    if (total * TICK_RECORD_BYTES > bufferSizeMB * 1024 * 1024 * 0.9) throw new Error('too many events for the buffer');
    // A ring (flight recorder) of 16 MB wraps many times over: every chunk after the first lap is stolen from the oldest.
    const session = ring
      ? await startSession({ providers: PROVIDERS, bufferingMode: 'ring', bufferSizeMB: 16 })
      : await startSession({ providers: PROVIDERS, output: join(dir, 'enabled.tptrace'), bufferingMode: 'drop', bufferSizeMB });
    if (!E.enabled) throw new Error('the event should be enabled');
    const m = await measure((n) => {
      for (let i = 0; i < n; i++) {
        if (E.enabled) E.write(1.5, 2.5, 3, -4);
      }
    }, warm ? DRAIN_CATCH_UP_MS : 0);
    const r = await session.stop();
    return { ...m, eventsAttempted: total, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped, recordBytes: TICK_RECORD_BYTES };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Diagnostic: tracepipe's own generated writer (same call site, same code) aimed at a warm 1 MB
 * in-process target instead of a session's buffer, so there is no drain, no chunk hand-off and no
 * fresh memory. The difference to `tracepipe` is what the session buffer costs; to `ideal`, the writer.
 */
async function writerOnly(form) {
  const { bench, TICK_RECORD_BYTES } = await import('../support/tick-provider.mjs');
  const E = bench.Tick;
  if (form === 'atomic') {
    // The same event's writer, generated again with the publish an Atomics.store (what arm64 uses).
    const { generateWriter } = await import('../../dist/schema/event-writer.js');
    const write = generateWriter(E.layout, E.typeIndex, performance, false, () => undefined, true);
    Object.defineProperty(E, 'write', { value: write });
  } else if (form === 'closure') {
    // The writer a process gets when it refuses code generation (--disallow-code-generation-from-strings).
    const { closureWriter } = await import('../../dist/schema/closure-writer.js');
    Object.defineProperty(E, 'write', { value: closureWriter(E.layout, E.typeIndex, performance, false, () => undefined) });
  }
  const RING = 1 << 20;
  const sab = new SharedArrayBuffer(RING);
  const target = {
    pos: 0,
    end: RING,
    commitIndex: 0,
    seq: 0,
    u8: new Uint8Array(sab),
    i8: new Int8Array(sab),
    u16: new Uint16Array(sab),
    i16: new Int16Array(sab),
    u32: new Uint32Array(sab),
    i32: new Int32Array(sab),
    f32: new Float32Array(sab),
    f64: new Float64Array(sab),
    b64: new BigInt64Array(sab),
    // The type is described: every write but the one that wraps takes the fast path.
    described: Uint8Array.from({ length: E.typeIndex + 1 }, () => 1),
    // Wraps around like the ideal ring; word 0 stands in for a chunk's commit word.
    reserve() {
      this.pos = 8;
      return 8;
    },
    reject() {},
  };
  E.setTargets([target]);
  const m = await measure((n) => {
    for (let i = 0; i < n; i++) {
      if (E.enabled) E.write(1.5, 2.5, 3, -4);
    }
  });
  return { ...m, recordBytes: TICK_RECORD_BYTES, seq: target.seq };
}

/**
 * The same 40-byte record (length, type, timestamp, a, b, c, d) bump-allocated in a SharedArrayBuffer
 * ring that wraps around: no enabled check, no chunks, no commit word. `ringMB` 1 keeps the ring warm
 * in cache; 256 (never wrapped in this run) makes every page a first touch, as in a fresh session buffer.
 */
async function ideal(ringMB) {
  const { TICK_RECORD_BYTES } = await import('../support/tick-provider.mjs');
  const RING = ringMB << 20;
  const sab = new SharedArrayBuffer(RING);
  const u32 = new Uint32Array(sab);
  const i32 = new Int32Array(sab);
  const f64 = new Float64Array(sab);
  const SIZE = TICK_RECORD_BYTES;
  const LIMIT = RING - SIZE;
  let pos = 0;
  function write(a, b, c, d) {
    const ts = performance.now();
    let p = pos;
    if (p > LIMIT) p = 0;
    u32[p >> 2] = SIZE;
    u32[(p >> 2) + 1] = 1;
    f64[(p >> 3) + 1] = ts;
    f64[(p >> 3) + 2] = a;
    f64[(p >> 3) + 3] = b;
    u32[(p >> 2) + 8] = c;
    i32[(p >> 2) + 9] = d;
    pos = p + SIZE;
  }
  const m = await measure((n) => {
    for (let i = 0; i < n; i++) write(1.5, 2.5, 3, -4);
  });
  return { ...m, checksum: f64[3] + u32[8] + i32[9], recordBytes: SIZE, ringMB };
}

async function pinoVariant() {
  const { default: pino } = await import('pino');
  const logger = pino(pino.destination({ dest: '/dev/null', sync: true }));
  const m = await measure((n) => {
    for (let i = 0; i < n; i++) logger.info({ a: 1.5, b: 2.5, c: 3, d: -4 });
  });
  return { ...m, pinoVersion: createRequire(import.meta.url)('pino/package.json').version };
}

const variants = { tracepipe: () => tracepipe(false), 'tracepipe-warm': () => tracepipe(true), 'tracepipe-ring': () => tracepipe(true, true), 'writer-only': () => writerOnly('generated'), 'writer-atomic': () => writerOnly('atomic'), 'writer-closure': () => writerOnly('closure'), ideal: () => ideal(1), 'ideal-fresh': () => ideal(256), pino: pinoVariant };
if (!variants[variant]) throw new Error(`unknown variant ${variant}`);
reportResult({ variant, ...(await variants[variant]()) });
