import type { Writable } from 'node:stream';
import { Ctl, type SessionMemory } from '../buffers/session-memory.js';
import type { TraceEvent } from '../format/trace-event.js';

/**
 * Where a session's bytes end up, as the caller of startSession names it. `{ fd }` is a connected
 * socket (or pipe) the drain thread writes to itself; the caller keeps the descriptor open until the
 * session's `done` settles. `prologue` returns bytes to send before the trace (e.g. a reply naming the session).
 */
export type SessionOutput =
  | string
  | { readonly stream: Writable }
  | { onEvent(e: TraceEvent): void }
  | { readonly fd: number; readonly prologue?: (sessionId: number) => Uint8Array };

/** The owning thread's end of a stream or listener output: consumes what the drain posts. */
export interface OutputConsumer {
  consume(bytes: Uint8Array): void;
  /** Resolves once everything consumed is out (the stream finished); rejects on a stream error. */
  finish(): Promise<void>;
}

export class StreamConsumer implements OutputConsumer {
  private failed: Error | undefined;

  constructor(
    private readonly stream: Writable,
    private readonly memory: SessionMemory,
    onError: (e: Error) => void,
  ) {
    stream.on('error', (e: Error) => {
      this.failed = e;
      onError(e);
    });
    stream.on('drain', () => {
      Atomics.store(memory.i32, Ctl.Paused, 0);
      memory.wakeDrain();
    });
  }

  consume(bytes: Uint8Array): void {
    if (this.failed || this.stream.destroyed) return;
    if (!this.stream.write(bytes)) Atomics.store(this.memory.i32, Ctl.Paused, 1);
  }

  finish(): Promise<void> {
    return new Promise((resolve) => {
      if (this.failed || this.stream.destroyed || this.stream.writableFinished) return resolve();
      this.stream.end(() => resolve());
      this.stream.once('error', () => resolve());
    });
  }
}
