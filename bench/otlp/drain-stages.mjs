// Where the time of tracepipe's live OTLP export goes, without a profiler: the stages its drain
// thread runs (src/sinks/otlp-sink.ts) timed one by one on this thread, over a trace a traced server
// wrote: reading the stream and pairing spans into requests (TraceParser + OtlpSignals), encoding
// them (protobuf), gzip; then the sender thread's part, posting each request to the collector with
// fetch. Each stage runs REPEATS times over the whole trace; the median of its on-CPU time counts.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { TraceParser } from '../../dist/format/trace-parser.js';
import { OtlpSignals, otlpResource } from '../../dist/otlp/otlp-signals.js';
import { otlpRequestBytes } from '../../dist/otlp/otlp-protobuf.js';
import { ProtobufWriter } from '../../dist/format/protobuf-writer.js';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';

const REPEATS = 5;
const POST_TIMEOUT_MS = 10_000;

/** The median on-CPU ns of `fn()` (sync or async) over REPEATS runs, and its last result. */
async function timed(fn) {
  const ns = [];
  let result;
  for (let r = 0; r < REPEATS; r++) {
    const before = threadCpu();
    result = await fn();
    ns.push(threadCpu().runNs - before.runNs);
  }
  return { ns: median(ns), result };
}

/** Every OTLP request the live export makes of `traceFile`'s stream, as plain batches. */
function pairedBatches(bytes, serviceName) {
  const batches = [];
  let signals;
  let resource;
  const parser = new TraceParser({
    header: (h) => {
      resource = otlpResource(h, { serviceName });
      signals = new OtlpSignals(h, (b) => batches.push(b));
    },
    event: (e) => signals.event(e),
  });
  parser.push(bytes);
  parser.finish();
  signals.finish();
  return { batches, resource };
}

/** The per-span cost of each stage of exporting `traceFile`, posting to `endpoint` as `serviceName`. */
export async function drainStages(traceFile, endpoint, serviceName) {
  if (!threadCpu()) throw new Error('drain stages: /proc/thread-self/schedstat is not readable here');
  const bytes = readFileSync(traceFile);
  const pair = await timed(() => pairedBatches(bytes, serviceName));
  const { batches, resource } = pair.result;
  const spans = batches.reduce((n, b) => n + (b.signal === 'traces' ? b.items.length : 0), 0);
  const pb = new ProtobufWriter();
  const encode = await timed(() => batches.map((b) => ({ path: `/v1/${b.signal}`, body: otlpRequestBytes(b, resource, pb) })));
  const compress = await timed(() => encode.result.map((r) => ({ ...r, gzipped: gzipSync(r.body) })));
  const post = await timed(async () => {
    for (const r of compress.result) {
      const res = await fetch(endpoint + r.path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
        body: r.gzipped,
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`drain stages: the collector answered ${res.status}`);
    }
  });
  const sum = (k) => compress.result.reduce((n, r) => n + r[k].length, 0);
  return {
    spans,
    requests: batches.length,
    traceBytes: bytes.length,
    protobufBytes: sum('body'),
    gzipBytes: sum('gzipped'),
    usPerSpan: { pair: pair.ns / 1e3 / spans, encode: encode.ns / 1e3 / spans, gzip: compress.ns / 1e3 / spans, post: post.ns / 1e3 / spans },
  };
}
