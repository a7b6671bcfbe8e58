import type { Sink } from '../drain/sink.js';
import { requireBuiltin } from '../schema/this-thread.js';
import { pauseThread } from './pause-thread.js';

// Through the process: the main thread loads this for the native drain (an ES module import of node:fs loads its streams).
const { readSync, writeSync } = requireBuiltin('node:fs') as typeof import('node:fs');

/** How long a write waits for a full socket buffer before trying again. */
const RETRY_WAIT_MS = 2;
/**
 * The longest a reader that went away unseen (no write to fail) keeps its session: an idle drain
 * wakes for nothing else. A pass that runs anyway (a periodic sample, a sequence point) checks once a
 * quarter of it has gone by, so a session whose samples wake the drain once a second never wakes it
 * for this.
 */
const PEER_CHECK_MS = 2000;
const PEER_CHECK_EARLY_MS = PEER_CHECK_MS / 4;
/**
 * A reader that takes no byte for this long is not reading (stopped, hung, or never meant to): the
 * session fails and frees its memory and its place among the process's sessions.
 */
export const READER_STALL_MS = 30_000;

/** The session fails (and frees its memory) instead of writing into the void. */
const READER_GONE = 'the reader closed the connection';

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

/**
 * Writes what a non-blocking socket takes now, never waiting: the count written, 0 when its buffer
 * is full. Throws when the reader has gone.
 */
export function writeSome(fd: number, bytes: Uint8Array, off: number): number {
  try {
    return writeSync(fd, bytes, off, bytes.length - off);
  } catch (e) {
    const c = code(e);
    if (c === 'EAGAIN' || c === 'EWOULDBLOCK') return 0;
    if (c === 'EPIPE' || c === 'ECONNRESET' || c === 'ENOTCONN') throw new Error(READER_GONE);
    throw e;
  }
}

/**
 * Writes from the drain thread straight to a connected socket's descriptor, so the application thread
 * is not in the path (and Block mode works: a parked producer waits on this thread, not on itself).
 * The socket is non-blocking: a full buffer means wait briefly and retry, which is the back-pressure
 * that makes producers drop or park, for at most READER_STALL_MS without progress. The descriptor
 * belongs to whoever opened it; it outlives the sink.
 */
export class FdSink implements Sink {
  readonly live = true;
  private lastPeerCheck = -Infinity;
  private readonly scratch = new Uint8Array(256);

  constructor(
    private readonly fd: number,
    prologue?: Uint8Array,
  ) {
    if (prologue) this.write(prologue);
  }

  write(bytes: Uint8Array): void {
    let off = 0;
    let lastProgress = performance.now();
    while (off < bytes.length) {
      const n = writeSome(this.fd, bytes, off);
      if (n > 0) {
        off += n;
        lastProgress = performance.now();
      } else if (performance.now() - lastProgress >= READER_STALL_MS) {
        throw new Error(`the reader took nothing for ${READER_STALL_MS / 1000} s`);
      } else {
        pauseThread(RETRY_WAIT_MS);
      }
    }
  }

  /** Until the next peer check is due: an idle drain sleeps no longer. */
  get maxSleepMs(): number {
    return Math.max(0, this.lastPeerCheck + PEER_CHECK_MS - performance.now());
  }

  /**
   * Never congested (a full socket is waited out in write), but the drain asks every pass, busy or
   * idle, so this is where a reader that vanished without a write to fail is noticed: a non-blocking
   * read sees end-of-file or a reset. Anything the reader sent is discarded.
   */
  get congested(): boolean {
    const now = performance.now();
    if (now - this.lastPeerCheck < PEER_CHECK_EARLY_MS) return false;
    this.lastPeerCheck = now;
    for (;;) {
      let n: number;
      try {
        n = readSync(this.fd, this.scratch, 0, this.scratch.length, null);
      } catch (e) {
        const c = code(e);
        if (c === 'EAGAIN' || c === 'EWOULDBLOCK') return false;
        throw new Error(READER_GONE);
      }
      if (n === 0) throw new Error(READER_GONE);
    }
  }

  close(): void {}
}
