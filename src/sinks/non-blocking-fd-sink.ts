import type { Sink } from '../drain/sink.js';
import { writeSome } from './fd-sink.js';

/**
 * A sink that never waits for its reader: what the socket does not take at once is kept, and sent
 * by `flush()` when the drain comes back to it. A ring's drain serves dumps to clients through it, so
 * a client that reads slowly (or never) holds up nothing but its own dump; the drain writes more only
 * once the kept bytes are gone, so they stay one slice of the dump at most.
 */
export class NonBlockingFdSink implements Sink {
  private readonly kept: Uint8Array[] = [];
  /** How far into kept[0] the socket has taken. */
  private keptOff = 0;
  /** performance.now() when the reader last took a byte (or the sink was opened). */
  lastProgressMs = performance.now();

  constructor(
    private readonly fd: number,
    prologue?: Uint8Array,
  ) {
    if (prologue) this.write(prologue);
  }

  /** Sends now what the socket takes; keeps a copy of the rest (the writer reuses its buffer). */
  write(bytes: Uint8Array): void {
    if (this.kept.length > 0) {
      this.kept.push(bytes.slice());
      return;
    }
    const n = writeSome(this.fd, bytes, 0);
    if (n > 0) this.lastProgressMs = performance.now();
    if (n < bytes.length) this.kept.push(bytes.slice(n));
  }

  /** Sends what the socket takes now of what was kept; true when nothing is left. Throws when the reader has gone. */
  flush(): boolean {
    while (this.kept.length > 0) {
      const head = this.kept[0]!;
      const n = writeSome(this.fd, head, this.keptOff);
      if (n === 0) return false;
      this.lastProgressMs = performance.now();
      this.keptOff += n;
      if (this.keptOff < head.length) return false;
      this.kept.shift();
      this.keptOff = 0;
    }
    return true;
  }

  /** The descriptor belongs to whoever opened it. */
  close(): void {}
}
