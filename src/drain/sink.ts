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
}
