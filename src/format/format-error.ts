/**
 * Every way a trace can be unreadable, as one error type with a stable code and the byte offset.
 * `limit`: the trace is well formed but needs more than a reader holds (see reader-limits.ts).
 */
export type TraceErrorCode = 'not-a-trace' | 'unsupported-version' | 'truncated' | 'corrupt' | 'limit' | 'io';

export class TraceFormatError extends Error {
  override readonly name = 'TraceFormatError';
  constructor(
    readonly code: TraceErrorCode,
    message: string,
    /** Byte offset in the stream where reading stopped. */
    readonly offset: number,
  ) {
    super(message);
  }
}
