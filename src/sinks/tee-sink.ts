import type { Sink } from '../drain/sink.js';
import type { OtlpSink } from './otlp-sink.js';

/** A file (or other byte output) and the OTLP export from one session: the bytes go to both. */
export class TeeSink implements Sink {
  readonly live = true;
  readonly maxSleepMs: number;

  constructor(
    private readonly main: Sink,
    private readonly otlp: OtlpSink,
  ) {
    this.maxSleepMs = Math.min(main.maxSleepMs ?? Infinity, otlp.maxSleepMs);
  }

  get congested(): boolean {
    return this.main.congested === true;
  }

  write(bytes: Uint8Array): void {
    this.main.write(bytes);
    this.otlp.write(bytes);
  }

  poll(): void {
    this.otlp.poll();
  }

  close(): void {
    try {
      this.main.close();
    } finally {
      this.otlp.close();
    }
  }

  stats() {
    return this.otlp.stats();
  }

  finishExport() {
    return this.otlp.finishExport();
  }
}
