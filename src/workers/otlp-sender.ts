/** Worker entry of a session's OTLP export: posts the requests the drain encodes, one at a time, with retries. */
import { parentPort, workerData } from 'node:worker_threads';
import { OtlpCounter, OtlpQueueState, type OtlpRequestMessage, type OtlpSenderConfig } from '../sinks/otlp-queue.js';

const config = workerData as OtlpSenderConfig;
const state = new OtlpQueueState(config.sab);
const queue: OtlpRequestMessage[] = [];
let ended = false;
let busy = false;

/** A request waits this long for its answer; retries back off from BACKOFF_MS doubling to MAX_BACKOFF_MS. */
const REQUEST_TIMEOUT_MS = 10_000;
const BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;
/** Attempts of one request at most: then it is dropped (counted), so a collector that stays down costs bounded memory and time. */
const MAX_ATTEMPTS = 6;
/** OTLP/HTTP's retryable answers: too many requests, bad gateway, unavailable, gateway timeout. */
const RETRYABLE = new Set([429, 502, 503, 504]);

const base = config.endpoint.replace(/\/+$/, '');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** True once the collector took the request; false if it is given up. */
async function post(m: OtlpRequestMessage): Promise<boolean> {
  let delay = BACKOFF_MS;
  for (let attempt = 1; ; attempt++) {
    let retryAfterMs: number | undefined;
    try {
      const res = await fetch(base + m.path, {
        method: 'POST',
        headers: { ...config.headers, 'content-type': config.json ? 'application/json' : 'application/x-protobuf', 'content-encoding': 'gzip' },
        body: m.body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return true;
      if (!RETRYABLE.has(res.status)) return false;
      const after = Number(res.headers.get('retry-after'));
      if (after > 0) retryAfterMs = Math.min(after * 1000, MAX_BACKOFF_MS);
    } catch {
      // A network error or a timeout: retried like a 503.
    }
    if (attempt >= MAX_ATTEMPTS) return false;
    await sleep(retryAfterMs ?? delay * (0.5 + Math.random() / 2));
    delay = Math.min(delay * 2, MAX_BACKOFF_MS);
  }
}

async function run(): Promise<void> {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const m = queue.shift()!;
    const ok = await post(m);
    state.settle(() => {
      state.add(ok ? OtlpCounter.RequestsSent : OtlpCounter.RequestsDropped, 1);
      state.add(ok ? OtlpCounter.ItemsSent : OtlpCounter.ItemsDropped, m.items);
      state.add(OtlpCounter.QueuedBytes, -m.body.length);
      state.add(OtlpCounter.QueuedRequests, -1);
      state.add(OtlpCounter.QueuedItems, -m.items);
      state.add(ok ? OtlpCounter.SpansSent : OtlpCounter.SpansDropped, m.spans);
      state.add(OtlpCounter.QueuedSpans, -m.spans);
    });
  }
  busy = false;
  if (ended) {
    Atomics.store(state.i32, OtlpCounter.Finished, 1);
    Atomics.notify(state.i32, OtlpCounter.Finished);
    parentPort!.close();
  }
}

parentPort!.on('message', (m: OtlpRequestMessage | { type: 'end' }) => {
  if (m.type === 'end') ended = true;
  else queue.push(m);
  void run();
});
