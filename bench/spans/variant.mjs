// One variant of the spans benchmark, in its own process (names in VARIANTS below).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
/** Between batches (not timed): the drain empties the buffer, so every batch writes into warm chunks. */
const PAUSE_MS = 150;
const SQL = 'select 1';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Per batch, wall and on-CPU ns per operation; the median batch of each. `loop(n)` may be async. */
async function measure(loop, between = () => undefined) {
  const wall = [];
  const cpu = [];
  for (let b = 0; b < WARMUP_BATCHES + BATCHES; b++) {
    await between();
    await sleep(PAUSE_MS);
    const c0 = threadCpu();
    const t0 = process.hrtime.bigint();
    await loop(ITERS);
    const t1 = process.hrtime.bigint();
    const c1 = threadCpu();
    if (b < WARMUP_BATCHES) continue;
    wall.push(Number(t1 - t0) / ITERS);
    if (c0 && c1) cpu.push((c1.runNs - c0.runNs) / ITERS);
  }
  return { nsPerOp: median(wall), cpuNsPerOp: cpu.length ? median(cpu) : null, batches: wall };
}

/** The benchmark's span (and the same shapes as plain events), defined in the full package. */
async function definitions() {
  const { defineProvider, Level } = await import('../../dist/index.js');
  return defineProvider('Bench.Spans', {
    events: {
      // A plain event pair with the span events' exact fields: what a span costs beyond two events.
      PairBegin: { id: 1, level: Level.Informational, fields: [['spanId', 'u64'], ['parentSpanId', 'u64'], ['sql', 'string']] },
      PairEnd: { id: 2, level: Level.Informational, fields: [['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string'], ['rows', 'u32']] },
    },
    spans: { Query: { id: 10, level: Level.Informational, fields: [['sql', 'string']], endFields: [['rows', 'u32']] } },
  });
}

/** Runs `loop` with a session recording Bench.Spans and Bench.Lite to a file; checks nothing was lost. */
async function withSession(loop, spansPerOp) {
  const { startSession } = await import('../../dist/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-'));
  try {
    const session = await startSession({ providers: 'Bench.Spans,Bench.Lite', output: join(dir, 'spans.tptrace'), bufferingMode: 'drop', bufferSizeMB: 256 });
    const m = await measure(loop);
    const r = await session.stop();
    const attempted = Math.round((WARMUP_BATCHES + BATCHES) * ITERS * 2 * spansPerOp);
    return { ...m, eventsAttempted: attempted, eventsWritten: r.eventsWritten, eventsDropped: r.eventsDropped };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function spanPair() {
  const { Query } = await definitions();
  return withSession((n) => {
    for (let i = 0; i < n; i++) {
      const t = Query.begin(SQL);
      Query.end(t, 3);
    }
  }, 1);
}

async function eventPair() {
  const p = await definitions();
  let id = 0;
  return withSession((n) => {
    for (let i = 0; i < n; i++) {
      const t = ++id;
      if (p.PairBegin.enabled) p.PairBegin.write(t, 0, SQL);
      if (p.PairEnd.enabled) p.PairEnd.write(t, false, '', 3);
    }
  }, 1);
}

async function runSync() {
  const { Query } = await definitions();
  let x = 0;
  const fn = () => ++x;
  return withSession((n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += Query.run(fn, SQL);
    return sink;
  }, 1);
}

const asyncFn = async () => 1;

async function runAsync() {
  const { Query } = await definitions();
  return withSession(async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += await Query.run(asyncFn, SQL);
    return sink;
  }, 1);
}

/** The same awaited async call with no span: what `runAsync` costs beyond the call itself. */
async function awaitOnly() {
  return measure(async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += await asyncFn();
    return sink;
  });
}

/** An async function still pending when it returns (it awaits once): `run` watches its promise settle. */
const pendingAsyncFn = async () => {
  await null;
  return 1;
};

async function runAsyncPending() {
  const { Query } = await definitions();
  return withSession(async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += await Query.run(pendingAsyncFn, SQL);
    return sink;
  }, 1);
}

async function awaitPendingOnly() {
  return measure(async (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) sink += await pendingAsyncFn();
    return sink;
  });
}

/**
 * The same awaits, no span of their own, while one span waits on a promise that settles only after
 * them: what the rest of the application pays while a span watches a promise (every settlement in
 * the thread passes V8's settle hook then).
 */
async function awaitBesidePendingSpan() {
  const { Query } = await definitions();
  let release;
  const result = await withSession(async (n) => {
    const held = Query.run(() => new Promise((r) => (release = r)), SQL);
    let sink = 0;
    for (let i = 0; i < n; i++) sink += await pendingAsyncFn();
    release(0);
    return sink + (await held);
  }, 1 / ITERS);
  return result;
}

/** A tracepipe/lite span adopted by the host: the same begin/end through the library's own object. */
async function litePair() {
  const { defineProvider } = await import('../../dist/api/lite.js');
  const lite = defineProvider('Bench.Lite', { spans: { Query: { id: 10, fields: [['sql', 'string']], endFields: [['rows', 'u32']] } } });
  await import('../../dist/index.js');
  const { Query } = lite;
  return withSession((n) => {
    for (let i = 0; i < n; i++) {
      const t = Query.begin(SQL);
      Query.end(t, 3);
    }
  }, 1);
}

/** OpenTelemetry's SDK: startSpan with the same attribute, one attribute at the end, end(); an in-memory exporter. */
async function otel() {
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('bench');
  let exported = 0;
  const m = await measure(
    (n) => {
      for (let i = 0; i < n; i++) {
        const span = tracer.startSpan('Query', { attributes: { sql: SQL } });
        span.setAttribute('rows', 3);
        span.end();
      }
    },
    // The exporter keeps every span: emptied between batches (untimed), as a real exporter would ship them.
    () => {
      exported += exporter.getFinishedSpans().length;
      exporter.reset();
    },
  );
  exported += exporter.getFinishedSpans().length;
  return { ...m, exported, otelVersion: packageVersion('@opentelemetry/sdk-trace-base'), apiVersion: packageVersion('@opentelemetry/api') };
}

/** A dependency's version from its package.json (some packages do not export it). */
function packageVersion(name) {
  const entry = createRequire(import.meta.url).resolve(name);
  const root = entry.slice(0, entry.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}/`.length);
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
}

const VARIANTS = { 'span-pair': spanPair, 'event-pair': eventPair, 'run-sync': runSync, 'run-async': runAsync, 'await-only': awaitOnly, 'run-async-pending': runAsyncPending, 'await-pending-only': awaitPendingOnly, 'await-beside-span': awaitBesidePendingSpan, 'lite-pair': litePair, otel };
if (!VARIANTS[variant]) throw new Error(`unknown variant ${variant}`);
reportResult({ variant, ...(await VARIANTS[variant]()) });
