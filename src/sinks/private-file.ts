import type { FileHandle } from 'node:fs/promises';
import { requireBuiltin } from '../schema/this-thread.js';
import { pauseThread } from './pause-thread.js';

// Through the process, not an ES module import (which reads every export, and node:fs's lazy ones
// load its streams): the main thread opens a session's file for the native drain.
const { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, renameSync, rmSync, statSync, writeSync } = requireBuiltin('node:fs') as typeof import('node:fs');
/** node:fs/promises, loaded by the first asynchronous open (the main thread's session start needs none). */
const fsPromises = (): typeof import('node:fs/promises') => requireBuiltin('node:fs/promises') as typeof import('node:fs/promises');

/**
 * How tracepipe creates every file it writes. Traces hold argv, the working directory and URLs; heap
 * dumps hold the heap's secrets (tokens, keys): each file is readable and writable by its owner only,
 * whatever the umask. A directory tracepipe makes for its output is its owner's only too.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Without O_TRUNC: an existing file is made private before anything in it is lost. */
const OUTPUT_FLAGS = constants.O_WRONLY | constants.O_CREAT;
/** O_EXCL fails on any existing name, a symbolic link included (the link is never followed). */
const NEW_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * An output file that may exist already (the user named it): an existing regular file is made 0600
 * and then emptied. Another user's file is refused untouched: its owner could read it whatever its
 * mode (root could change the mode, not the owner). A device or a pipe (/dev/null, /dev/stdout) is
 * written as it is.
 */
function makePrivate(fd: number, path: string): void {
  const st = fstatSync(fd);
  if (!st.isFile()) return;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new Error(`${path} exists and belongs to another user (uid ${st.uid}); remove it or choose another name`);
  if ((st.mode & 0o777) !== PRIVATE_FILE_MODE) {
    try {
      fchmodSync(fd, PRIVATE_FILE_MODE);
    } catch (e) {
      throw new Error(`${path} exists and cannot be made readable by its owner only (${(e as Error).message}); remove it or choose another name`);
    }
  }
  ftruncateSync(fd, 0);
}

/** How long an output that is a FIFO may wait for a process to open it for reading. */
export const FIFO_READER_WAIT_MS = 10_000;
const FIFO_POLL_MS = 20;

/**
 * Opening a FIFO for writing blocks until a process opens it for reading, with no limit, in a thread
 * nothing can interrupt (a startup session's application would never start): wait for a reader here
 * instead, polling with a non-blocking open, at most FIFO_READER_WAIT_MS. Returns that open's
 * descriptor, to be closed only once the blocking open that follows (which finds the reader there and
 * returns at once) holds the pipe: closing the last writer first would give the reader its end of file.
 */
function awaitFifoReader(path: string): number | undefined {
  let isFifo = false;
  try {
    isFifo = statSync(path).isFIFO();
  } catch {
    return undefined; // Not there: the open creates a regular file.
  }
  if (!isFifo) return undefined;
  const deadline = Date.now() + FIFO_READER_WAIT_MS;
  for (;;) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENXIO') throw e;
    }
    if (Date.now() >= deadline) throw new Error(`${path} is a FIFO that no process opened for reading within ${FIFO_READER_WAIT_MS / 1000} s`);
    pauseThread(FIFO_POLL_MS);
  }
}

/** Opens `path` for writing as a private file (see makePrivate); returns the descriptor. */
export function openPrivateFileSync(path: string): number {
  const waited = awaitFifoReader(path);
  let fd: number;
  try {
    fd = openSync(path, OUTPUT_FLAGS, PRIVATE_FILE_MODE);
  } finally {
    if (waited !== undefined) closeSync(waited);
  }
  try {
    makePrivate(fd, path);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/** openPrivateFileSync for the asynchronous file API. */
export async function openPrivateFile(path: string): Promise<FileHandle> {
  const fh = await fsPromises().open(path, OUTPUT_FLAGS, PRIVATE_FILE_MODE);
  try {
    makePrivate(fh.fd, path);
  } catch (e) {
    await fh.close();
    throw e;
  }
  return fh;
}

/** Creates `path`, which must not exist (a file in a directory tracepipe has just prepared): a name planted meanwhile fails, never followed. */
export function createNewFile(path: string): Promise<FileHandle> {
  return fsPromises().open(path, NEW_FLAGS, PRIVATE_FILE_MODE);
}

/** createNewFile for the synchronous file API. */
export function createNewFileSync(path: string): number {
  return openSync(path, NEW_FLAGS, PRIVATE_FILE_MODE);
}

/** Writes all of `data` to `path` as a private file (see openPrivateFileSync). */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  const fh = await openPrivateFile(path);
  try {
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}

/** A new file beside `path` whose name nobody can guess, created exclusively. */
function createTemporary(path: string): { fd: number; name: string } {
  const name = `${path}.${process.pid}.${(requireBuiltin('node:crypto') as typeof import('node:crypto')).randomBytes(6).toString('hex')}.tmp`;
  return { fd: openSync(name, NEW_FLAGS, PRIVATE_FILE_MODE), name };
}

/** Throws now, not after minutes of work, when no file can be created beside `path` (a missing or read-only directory). */
export function checkCanCreate(path: string): void {
  const { fd, name } = createTemporary(path);
  closeSync(fd);
  rmSync(name);
}

/**
 * Writes a private file under a temporary name beside `path` and renames it into place at the end, so
 * a failure (a full disk, an error half way) leaves no partial file under the name asked for. The
 * rename replaces whatever `path` was (a symbolic link itself, not its target). `write` gets a function
 * that appends bytes; returns the bytes written.
 */
export function writeThroughTempFile(path: string, write: (put: (bytes: Uint8Array) => void) => void): number {
  const { fd, name } = createTemporary(path);
  let size = 0;
  try {
    write((b) => {
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off, b.length - off);
      size += b.length;
    });
    closeSync(fd);
    renameSync(name, path);
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
    rmSync(name, { force: true });
    throw e;
  }
  return size;
}
