import type { SessionMemory } from '../buffers/session-memory.js';
import type { HeaderInfo } from '../format/stream-header.js';
import type { DumpRequest, DumpResult, DumpTarget } from '../session/drain-protocol.js';
import { DrainLoop } from './drain-loop.js';
import type { Sink } from './sink.js';

/** A dump to a client that takes no byte for this long is abandoned. */
export const CLIENT_STALL_MS = 5000;
/** A dump to a client that is not complete this long after it was asked for (its wait in line included) is abandoned. */
export const CLIENT_DEADLINE_MS = 30_000;
/** How much is encoded at a time: a file takes it at once; a client's socket buffer holds about this much. */
const FILE_SLICE_BYTES = 1 << 20;
const CLIENT_SLICE_BYTES = 64 << 10;
/** A client's full socket is tried again after this, doubling while it stays full, up to the maximum. */
const CLIENT_RETRY_MS = 1;
const CLIENT_RETRY_MAX_MS = 50;

/** What every dump of one ring shares. */
export interface RingDumpContext {
  readonly memory: SessionMemory;
  readonly header: HeaderInfo;
  readonly clockDeltaNs: number;
  /** A file target's sink waits for the disk; a client's never waits for the client (it has flush()). */
  readonly sinkFor: (t: DumpTarget) => Sink;
}

export type DumpStep = 'more' | 'blocked' | 'done';

/**
 * One dump of a ring, written a slice at a time, so the drain can serve other dumps in between:
 * a client that reads slowly, or never, holds up only its own dump, and only until its deadline.
 * Nothing is read from the ring before the dump's first step.
 */
export class RingDump {
  private sink: Sink | undefined;
  private loop: DrainLoop | undefined;
  private encoded = false;
  /** How long to leave a client's full socket before trying again. */
  retryMs = CLIENT_RETRY_MS;

  constructor(
    readonly request: DumpRequest,
    /** performance.now() when the drain received the request. */
    private readonly askedAtMs: number,
  ) {}

  get toClient(): boolean {
    return this.request.target.kind === 'fd';
  }

  /** Writes the next slice (the first one opens the sink and lists the ring). Throws what the sink throws. */
  step(ctx: RingDumpContext): DumpStep {
    if (!this.loop) {
      this.sink = ctx.sinkFor(this.request.target);
      this.loop = new DrainLoop(ctx.memory, this.sink, ctx.header, ctx.clockDeltaNs);
      this.loop.startDump();
    }
    const sink = this.sink!;
    if (sink.flush && !sink.flush()) return this.blocked();
    if (!this.encoded) this.encoded = this.loop.continueDump(this.toClient ? CLIENT_SLICE_BYTES : FILE_SLICE_BYTES);
    if (sink.flush && !sink.flush()) return this.blocked();
    this.retryMs = CLIENT_RETRY_MS;
    return this.encoded ? 'done' : 'more';
  }

  private blocked(): DumpStep {
    this.retryMs = Math.min(this.retryMs * 2, CLIENT_RETRY_MAX_MS);
    return 'blocked';
  }

  /** Why a client's dump is to be given up now, if it is. */
  overdue(nowMs: number): string | undefined {
    if (!this.toClient) return undefined;
    if (nowMs - this.askedAtMs >= CLIENT_DEADLINE_MS) return `abandoned: not complete within ${CLIENT_DEADLINE_MS / 1000} s of the request${this.loop ? '' : ' (it waited for other dumps to clients)'}`;
    const last = this.sink?.lastProgressMs;
    if (last !== undefined && nowMs - last >= CLIENT_STALL_MS) return `abandoned: the client took nothing for ${CLIENT_STALL_MS / 1000} s`;
    return undefined;
  }

  /** Releases the sink; what was written, and why the dump ended early (`error`). */
  finish(error?: string): DumpResult {
    if (this.loop) return this.loop.finishDump(error);
    try {
      this.sink?.close();
    } catch {
      // The sink failed as it opened: `error` says so already.
    }
    return { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, ...(error === undefined ? {} : { error }) };
  }
}
