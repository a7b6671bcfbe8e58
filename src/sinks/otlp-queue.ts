/**
 * What the drain thread (which encodes requests) and the OTLP sender thread (which posts them) share:
 * counters in a SharedArrayBuffer, so the drain knows without a message how many bytes wait to be
 * sent (the queue is bounded by them) and the session's result can say what was sent and dropped.
 */
export const OtlpCounter = {
  /** Bytes of request bodies handed to the sender and not yet settled (sent or given up). */
  QueuedBytes: 0,
  RequestsSent: 1,
  ItemsSent: 2,
  /** Requests and their items given up: the queue was full, the collector refused them, or retries ran out. */
  RequestsDropped: 3,
  ItemsDropped: 4,
  /** The sender has settled everything it was given and the end message (1), so the drain may go. */
  Finished: 5,
  /** Requests and items handed to the sender and not yet settled. */
  QueuedRequests: 6,
  QueuedItems: 7,
  /** Held (1) while one side settles counts: a request is counted once, as sent or as dropped. */
  Lock: 8,
  /** The drain gave up on what is queued (and counted it dropped): the sender counts nothing more. */
  Abandoned: 9,
  /** The spans among the items: sent, dropped, queued. */
  SpansSent: 10,
  SpansDropped: 11,
  QueuedSpans: 12,
} as const;
const COUNTERS = 13;
/** Tries at the lock before waiting for it. */
const SPIN_LIMIT = 1000;
/** How long one side waits for the other to let go of the lock before settling without it. */
const LOCK_WAIT_MS = 1000;

export class OtlpQueueState {
  readonly i32: Int32Array;

  constructor(readonly sab = new SharedArrayBuffer(COUNTERS * 4)) {
    this.i32 = new Int32Array(sab);
  }

  get(c: number): number {
    return Atomics.load(this.i32, c);
  }

  add(c: number, n: number): void {
    Atomics.add(this.i32, c, n);
  }

  /**
   * Runs `fn` holding the lock, unless the drain has abandoned the queue. Each side holds the lock for
   * a few additions only, so it is nearly always free after a short spin; a side descheduled while it
   * holds it (a loaded machine) is waited for, up to LOCK_WAIT_MS, and only a side that died holding
   * it (which must not hold the other forever) is settled past: without the lock, and without
   * releasing what the other side holds.
   */
  settle(fn: () => void): void {
    const take = (): boolean => Atomics.compareExchange(this.i32, OtlpCounter.Lock, 0, 1) === 0;
    let held = false;
    for (let i = 0; i < SPIN_LIMIT && !(held = take()); i++);
    for (const deadline = performance.now() + LOCK_WAIT_MS; !held && performance.now() < deadline; ) {
      Atomics.wait(this.i32, OtlpCounter.Lock, 1, 1);
      held = take();
    }
    try {
      if (Atomics.load(this.i32, OtlpCounter.Abandoned) === 0) fn();
    } finally {
      if (held) {
        Atomics.store(this.i32, OtlpCounter.Lock, 0);
        Atomics.notify(this.i32, OtlpCounter.Lock);
      }
    }
  }
}

/** One request as the drain hands it to the sender. */
export interface OtlpRequestMessage {
  readonly type: 'request';
  readonly path: '/v1/traces' | '/v1/metrics' | '/v1/logs';
  readonly body: Uint8Array;
  readonly items: number;
  /** The items, when they are spans (else 0). */
  readonly spans: number;
}

export interface OtlpSenderConfig {
  /** The collector's base URL (OTLP/HTTP: the signal's path is appended, as OTEL_EXPORTER_OTLP_ENDPOINT says). */
  readonly endpoint: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly json: boolean;
  readonly sab: SharedArrayBuffer;
}
