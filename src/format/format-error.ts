/** Every way a trace can be unreadable, as one error type with a stable code and the byte offset. */
export type TraceErrorCode = 'not-a-trace' | 'unsupported-version' | 'truncated' | 'corrupt' | 'io';

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
