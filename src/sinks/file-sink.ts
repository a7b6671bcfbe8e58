import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { Sink } from '../drain/sink.js';

/** Writes straight to a file descriptor from the drain thread; the application thread never waits on disk. */
export class FileSink implements Sink {
  private fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w', 0o644);
  }

  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
  }

  close(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    try {
      fsyncSync(fd);
    } catch {
      // Not every file can be synced (pipes, /dev/null); the data was written either way.
    }
    closeSync(fd);
  }
}
