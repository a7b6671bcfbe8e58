import { channel } from 'node:diagnostics_channel';

/** What a read of a trace file publishes as it goes: once when the file is opened (0 bytes read), then after each read. */
export interface TraceReadProgress {
  readonly path: string;
  readonly bytesRead: number;
  /** The file's size when it was opened. */
  readonly size: number;
}

/**
 * Every pass over a trace file, whichever tool makes it (a report makes several, some inside the
 * analyses it calls), is published here, so that the CLI can show progress without each analysis
 * taking a callback. Without a subscriber, a read checks one flag and publishes nothing.
 */
export const traceReadChannel = channel('tracepipe:trace-read');
