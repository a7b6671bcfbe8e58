import { closeSync, fsyncSync, writeSync } from 'node:fs';
import type { Sink } from '../drain/sink.js';
import { createNewFileSync, openPrivateFileSync } from './private-file.js';

/**
 * Writes straight to a file descriptor from the drain thread; the application thread never waits on disk.
 * The file is readable by its owner only (0600, an existing one too): a trace holds argv, the working
 * directory and URLs.
 */
export class FileSink implements Sink {
  private fd: number;

  /** `newFile`: the name is one tracepipe made up, in a directory others may write: created exclusively. */
  constructor(
    readonly path: string,
    newFile = false,
  ) {
    this.fd = newFile ? createNewFileSync(path) : openPrivateFileSync(path);
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
