import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { Sink } from '../drain/sink.js';

/** Owner read and write only. */
export const TRACE_FILE_MODE = 0o600;

/**
 * Writes straight to a file descriptor from the drain thread; the application thread never waits on disk.
 * A new file is readable by its owner only (0600): a trace holds argv, the working directory and URLs.
 * An existing file keeps its mode (it may be a device or a file shared on purpose).
 */
export class FileSink implements Sink {
  private fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w', TRACE_FILE_MODE);
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
