// Where the time of tracepipe's live OTLP export goes, without a profiler: the stages its drain
// thread runs (src/sinks/otlp-sink.ts) timed one by one on this thread, over a trace a traced server
// wrote: reading the stream and pairing spans into requests (otlpStreamParser + OtlpSignals), encoding
// them (protobuf), gzip; then the sender thread's part, posting each request to the collector with
// fetch. Each stage runs REPEATS times over the whole trace; the median of its on-CPU time counts.
//
// From the command line, `node bench/otlp/drain-stages.mjs TRACE [--before DIR] [--rounds N]` times
// the stages of this checkout's build (dist/) on TRACE, posting to bench/otlp/receiver.mjs; with
// --before, also those of another checkout's build (DIR/dist), the two taking turns each round, and
// prints both per span with their ratio (medians over the rounds). --gzip-level N gzips this
// checkout's requests at zlib level N instead of the export's own (bytes against CPU).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';

const REPEATS = 5;
const POST_TIMEOUT_MS = 10_000;
const RECEIVER_START_MS = 10_000;
const THIS_DIST = new URL('../../dist/', import.meta.url);
const STAGES = ['pair', 'encode', 'gzip', 'post'];

/** The export's modules of one build (a dist/ directory). A build from before OTLP_GZIP_LEVEL gzipped at zlib's default. */
async function exportModules(dist, gzipLevel) {
  const [{ TraceParser }, { OtlpSignals, otlpResource }, { otlpRequestBytes }, { ProtobufWriter }, sink] = await Promise.all(
    ['format/trace-parser.js', 'otlp/otlp-signals.js', 'otlp/otlp-protobuf.js', 'format/protobuf-writer.js', 'sinks/otlp-sink.js'].map((m) => import(new URL(m, dist))),
  );
  // The sink's own reading of the stream; a build from before it had one read with a plain TraceParser.
  const streamParser = await import(new URL('otlp/otlp-stream-parser.js', dist)).then((m) => m.otlpStreamParser, () => undefined);
  return { TraceParser, streamParser, OtlpSignals, otlpResource, otlpRequestBytes, ProtobufWriter, gzip: { level: gzipLevel ?? sink.OTLP_GZIP_LEVEL ?? -1 } };
}

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
function pairedBatches(m, bytes, serviceName) {
  const batches = [];
  let signals;
  let resource;
  const signalsFor = (h) => {
    resource = m.otlpResource(h, { serviceName });
    return (signals = new m.OtlpSignals(h, (b) => batches.push(b)));
  };
  const parser = m.streamParser ? m.streamParser(signalsFor) : new m.TraceParser({ header: signalsFor, event: (e) => signals.event(e) });
  parser.push(bytes);
  parser.finish();
  signals.finish();
  return { batches, resource };
}

/** The per-span cost of each stage of exporting `traceFile`, posting to `endpoint` as `serviceName`, with the build in `dist`. */
export async function drainStages(traceFile, endpoint, serviceName, dist = THIS_DIST, gzipLevel = undefined) {
  if (!threadCpu()) throw new Error('drain stages: /proc/thread-self/schedstat is not readable here');
  const m = await exportModules(dist, gzipLevel);
  const bytes = readFileSync(traceFile);
  const pair = await timed(() => pairedBatches(m, bytes, serviceName));
  const { batches, resource } = pair.result;
  const spans = batches.reduce((n, b) => n + (b.signal === 'traces' ? b.items.length : 0), 0);
  const pb = new m.ProtobufWriter();
  const encode = await timed(() => batches.map((b) => ({ path: `/v1/${b.signal}`, body: m.otlpRequestBytes(b, resource, pb) })));
  const compress = await timed(() => encode.result.map((r) => ({ ...r, gzipped: gzipSync(r.body, m.gzip) })));
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

/** bench/otlp/receiver.mjs in a child process (its decoding must not run on the measured thread). */
async function startReceiver() {
  const child = fork(fileURLToPath(new URL('./receiver.mjs', import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), RECEIVER_START_MS);
  const [message] = await Promise.race([once(child, 'message'), once(child, 'exit').then(() => Promise.reject(new Error('drain stages: the OTLP receiver did not start')))]);
  clearTimeout(timer);
  return { url: `http://127.0.0.1:${message.port}`, close: () => child.kill() };
}

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { before: { type: 'string' }, rounds: { type: 'string', default: '5' }, 'gzip-level': { type: 'string' } } });
  const rounds = Number(values.rounds);
  const gzipLevel = values['gzip-level'] === undefined ? undefined : Number(values['gzip-level']);
  if (positionals.length !== 1 || !Number.isInteger(rounds) || rounds < 1 || (gzipLevel !== undefined && !(Number.isInteger(gzipLevel) && gzipLevel >= 1 && gzipLevel <= 9))) {
    console.error('usage: node bench/otlp/drain-stages.mjs TRACE [--before CHECKOUT] [--rounds N] [--gzip-level 1-9]');
    process.exit(2);
  }
  const builds = [{ name: gzipLevel === undefined ? 'this checkout' : `this checkout, gzip level ${gzipLevel}`, dist: THIS_DIST, gzipLevel }];
  if (values.before) builds.unshift({ name: `before (${values.before})`, dist: pathToFileURL(`${resolve(values.before, 'dist')}/`) });
  const receiver = await startReceiver();
  const results = builds.map(() => []);
  try {
    for (let r = 0; r < rounds; r++) {
      // Taking turns, the first of each round alternating, so a drift of the machine's load reaches both.
      const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => i).reverse();
      for (const i of order) results[i].push(await drainStages(positionals[0], receiver.url, 'drain-stages', builds[i].dist, builds[i].gzipLevel));
    }
  } finally {
    receiver.close();
  }
  const first = results.map((rs) => rs[0]);
  console.log(`${first[0].spans} spans; ${rounds} rounds of ${REPEATS} repeats each, on-CPU µs per span (median over rounds)`);
  const perStage = results.map((rs) => Object.fromEntries(STAGES.map((s) => [s, median(rs.map((x) => x.usPerSpan[s]))])));
  const total = (p) => STAGES.reduce((n, s) => n + p[s], 0);
  for (const [i, b] of builds.entries()) {
    const p = perStage[i];
    const f = first[i];
    console.log(`  ${b.name.padEnd(40)} ${STAGES.map((s) => `${s} ${p[s].toFixed(2)}`).join('  ')}  all ${total(p).toFixed(2)}  (${f.requests} requests; bytes a span: ${(f.protobufBytes / f.spans).toFixed(1)} protobuf, ${(f.gzipBytes / f.spans).toFixed(1)} gzip'd)`);
  }
  if (builds.length === 2) {
    const [a, b] = perStage;
    console.log(`  ${'before / this checkout'.padEnd(40)} ${STAGES.map((s) => `${s} ${(a[s] / b[s]).toFixed(2)}x`).join('  ')}  all ${(total(a) / total(b)).toFixed(2)}x`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
