import { gzipSync } from 'node:zlib';
import { Worker } from 'node:worker_threads';
import type { Sink } from '../drain/sink.js';
import type { OtlpExportStats } from '../format/otlp-export-stats.js';
import type { OtlpSinkSpec } from '../session/drain-protocol.js';
import type { TraceParser } from '../format/trace-parser.js';
import { otlpRequestJson } from '../otlp/otlp-json.js';
import { otlpRequestBytes } from '../otlp/otlp-protobuf.js';
import { type OtlpBatch, type OtlpResource, otlpResource, OtlpSignals } from '../otlp/otlp-signals.js';
import { otlpStreamParser } from '../otlp/otlp-stream-parser.js';
import { ProtobufWriter } from '../format/protobuf-writer.js';
import { makeServiceWorker } from '../session/service-workers.js';
import { OtlpCounter, OtlpQueueState, type OtlpRequestMessage, type OtlpSenderConfig } from './otlp-queue.js';

/** Compressed request bodies waiting for the sender at most, unless the session says otherwise (maxQueueBytes). */
export const DEFAULT_MAX_QUEUE_BYTES = 8 << 20;
/** What has been paired and counted goes out at least this often (and in batches of MAX_BATCH_SPANS spans, MAX_BATCH_ITEMS other items). */
const BATCH_MS = 1000;
/** At the session's end, how long the drain waits for the sender to post what is queued (within the 3 s flush at a process's exit). */
const CLOSE_WAIT_MS = 2000;

/**
 * zlib's fastest level: on the spans of a loaded HTTP server it makes requests 0.8 % larger than the
 * default level 6 for a third of the CPU (BENCHMARKS.md §33.2), and the drain's CPU is what competes
 * with the application.
 */
export const OTLP_GZIP_LEVEL = 1;

const PATHS = { traces: '/v1/traces', metrics: '/v1/metrics', logs: '/v1/logs' } as const;

/**
 * The OTLP/HTTP export, on the drain thread: it reads the stream the drain writes (as a file would
 * hold it), turns it into OTLP requests (otlp-signals.ts, the same as `convert --to otlp`), gzips
 * them and hands them to a sender thread that posts them with retries. The queue between the two is
 * bounded in bytes: when the collector is down or slow, requests are dropped and counted
 * (OtlpExportStats), and nothing waits: not the drain, so never a producer, never the application.
 */
export class OtlpSink implements Sink {
  readonly live = true;
  readonly maxSleepMs = BATCH_MS;
  private readonly state = new OtlpQueueState();
  private readonly sender: Worker;
  private readonly parser: TraceParser;
  private signals: OtlpSignals | undefined;
  private resource: OtlpResource | undefined;
  private readonly pb = new ProtobufWriter();
  private lastBatchMs = performance.now();
  private finished = false;

  /** `closeWaitMs`: how long the end waits for the sender (a tool, which no process exit hurries, waits longer). */
  constructor(
    private readonly options: OtlpSinkSpec,
    private readonly closeWaitMs = CLOSE_WAIT_MS,
  ) {
    const config: OtlpSenderConfig = { endpoint: options.endpoint, headers: options.headers ?? {}, json: options.json === true, sab: this.state.sab };
    this.sender = makeServiceWorker(() => new Worker(new URL('../workers/otlp-sender.js', import.meta.url), { workerData: config }));
    this.sender.unref();
    this.parser = otlpStreamParser((h) => {
      this.resource = otlpResource(h, this.options);
      return (this.signals = new OtlpSignals(h, (b) => this.send(b)));
    });
  }

  /** Encodes, compresses and queues one request; one that cannot be (the queue full, or anything else) is dropped and counted, never the session's failure. */
  private send(batch: OtlpBatch): void {
    const s = this.state;
    const items = batch.items.length;
    const spans = batch.signal === 'traces' ? items : 0;
    const dropped = (): void => {
      s.add(OtlpCounter.RequestsDropped, 1);
      s.add(OtlpCounter.ItemsDropped, items);
      s.add(OtlpCounter.SpansDropped, spans);
    };
    let body: Uint8Array;
    try {
      body = gzipSync(this.options.json ? Buffer.from(otlpRequestJson(batch, this.resource!)) : otlpRequestBytes(batch, this.resource!, this.pb), { level: OTLP_GZIP_LEVEL });
    } catch {
      return s.settle(dropped);
    }
    let queued = false;
    s.settle(() => {
      if (s.get(OtlpCounter.QueuedBytes) + body.length > (this.options.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES)) return dropped();
      s.add(OtlpCounter.QueuedBytes, body.length);
      s.add(OtlpCounter.QueuedRequests, 1);
      s.add(OtlpCounter.QueuedItems, items);
      s.add(OtlpCounter.QueuedSpans, spans);
      queued = true;
    });
    if (!queued) return;
    const m: OtlpRequestMessage = { type: 'request', path: PATHS[batch.signal], body, items, spans };
    try {
      // Copied, not transferred: a zlib result's memory cannot always be transferred (Node 24 refuses it).
      this.sender.postMessage(m);
    } catch {
      s.settle(() => {
        s.add(OtlpCounter.QueuedBytes, -body.length);
        s.add(OtlpCounter.QueuedRequests, -1);
        s.add(OtlpCounter.QueuedItems, -items);
        s.add(OtlpCounter.QueuedSpans, -spans);
        dropped();
      });
    }
  }

  write(bytes: Uint8Array): void {
    if (!this.finished) this.parser.push(bytes);
  }

  poll(): void {
    const now = performance.now();
    if (now - this.lastBatchMs >= BATCH_MS) {
      this.lastBatchMs = now;
      this.signals?.flush();
    }
  }

  /**
   * The rest goes out (spans still open as unfinished); the sender gets up to closeWaitMs to post
   * it, and what it has not posted by then is counted as dropped: the counts are final.
   */
  finishExport(): OtlpExportStats {
    if (!this.finished) this.finish();
    return this.stats();
  }

  close(): void {
    if (!this.finished) this.finish();
    void this.sender.terminate();
  }

  private finish(): void {
    this.finished = true;
    this.signals?.finish();
    this.sender.postMessage({ type: 'end' });
    const s = this.state;
    Atomics.wait(s.i32, OtlpCounter.Finished, 0, this.closeWaitMs);
    if (s.get(OtlpCounter.Finished) !== 0) return;
    // What is still queued is given up: counted as dropped, like a request that found the queue full.
    s.settle(() => {
      s.add(OtlpCounter.RequestsDropped, s.get(OtlpCounter.QueuedRequests));
      s.add(OtlpCounter.ItemsDropped, s.get(OtlpCounter.QueuedItems));
      s.add(OtlpCounter.SpansDropped, s.get(OtlpCounter.QueuedSpans));
      Atomics.store(s.i32, OtlpCounter.Abandoned, 1);
    });
  }

  stats(): OtlpExportStats {
    const s = this.state;
    return {
      requestsSent: s.get(OtlpCounter.RequestsSent),
      itemsSent: s.get(OtlpCounter.ItemsSent),
      requestsDropped: s.get(OtlpCounter.RequestsDropped),
      itemsDropped: s.get(OtlpCounter.ItemsDropped),
      spansSent: s.get(OtlpCounter.SpansSent),
      spansDropped: s.get(OtlpCounter.SpansDropped),
    };
  }
}
