import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * Writes a file under a temporary name beside `path` and renames it into place at the end, so a
 * failure (a full disk, an error half way) leaves no partial file under the name asked for. `write`
 * gets a function that appends bytes; returns the bytes written.
 */
export function writeThroughTempFile(path: string, write: (put: (bytes: Uint8Array) => void) => void): number {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  let size = 0;
  try {
    write((b) => {
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off, b.length - off);
      size += b.length;
    });
    closeSync(fd);
    renameSync(tmp, path);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
    rmSync(tmp, { force: true });
    throw e;
  }
  return size;
}
