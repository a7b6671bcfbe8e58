import type { OtlpExportStats } from '../format/otlp-export-stats.js';

/**
 * Where the drain puts encoded trace bytes. Sinks run on the drain thread and are synchronous: a
 * write returns once the bytes are handed on, and throws when they cannot be (disk full, peer gone),
 * which fails the session without touching the application.
 */
export interface Sink {
  write(bytes: Uint8Array): void;
  /** Flushes and releases the destination; called once, also after a failed write. */
  close(): void;
  /** True while the consumer wants the drain to hold off (the drain's final pass ignores it). */
  readonly congested?: boolean;
  /**
   * A reader consumes the stream while it is written (a socket, a listener): after the producers go
   * quiet the drain writes a sequence point past their last events, so the reader can release them,
   * and periodic samples wake the drain (BUFFERING.md). A file is read once it is complete.
   */
  readonly live?: boolean;
  /** The longest an idle drain may sleep now: a sink that checks something on its passes. */
  readonly maxSleepMs?: number;
  /**
   * A sink that never waits for its reader (a dump to a client): write() keeps what the reader does
   * not take at once, and this sends what it takes now; true when nothing is left.
   */
  flush?(): boolean;
  /** Such a sink: performance.now() when the reader last took a byte. */
  readonly lastProgressMs?: number;
  /** Called on every drain pass, bytes or not (at least every maxSleepMs): a sink with batches of its own sends them on time. */
  poll?(): void;
  /** An OTLP export's counts. */
  stats?(): OtlpExportStats;
  /**
   * An OTLP export: sends what is left and gives up what cannot be sent in time (bounded), so its
   * counts are final; the drain calls it as the stream ends, to write them into the stream. Bytes
   * written after it are not exported.
   */
  finishExport?(): OtlpExportStats;
}
