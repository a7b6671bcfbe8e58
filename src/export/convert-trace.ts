import { TraceFormatError } from '../format/format-error.js';
import type { TraceHeader } from '../format/stream-header.js';
import { readTrace, type ByteSource } from '../format/trace-reader.js';
import type { ExportFiles, ExportWriter } from './export-writer.js';

export interface ConvertProgress {
  readonly events: number;
  /** Bytes of the input read so far. */
  readonly bytesIn: number;
}

export interface ConvertResult {
  readonly events: number;
  readonly dropped: number;
  readonly dropRanges: number;
  readonly bytesIn: number;
  readonly output: ExportFiles;
  /** Where a damaged input broke: every intact event before (and after) the damage was converted. */
  readonly error?: TraceFormatError;
}

/**
 * Streams a trace through one writer, batch by batch in stream order: the reader holds one block and
 * the writer its output buffers, whatever the trace size. A damaged input is converted up to its
 * damage (and past it: blocks after a bad checksum are intact) and the result carries the error.
 */
export async function convertTrace(input: ByteSource, writer: ExportWriter, onProgress?: (p: ConvertProgress) => void): Promise<ConvertResult> {
  let events = 0;
  let dropped = 0;
  let dropRanges = 0;
  let bytesIn = 0;
  let header: TraceHeader | undefined;
  let error: TraceFormatError | undefined;
  try {
    for await (const batch of readTrace(input).batches({ order: 'stream' })) {
      header = batch.header;
      events += batch.events.length;
      dropRanges += batch.drops.length;
      for (const d of batch.drops) dropped += d.count;
      bytesIn = batch.bytesRead;
      const pending = writer.write(batch);
      if (pending) await pending;
      onProgress?.({ events, bytesIn });
    }
  } catch (e) {
    // Before the header there is nothing to convert; after it, the intact part is the output.
    if (!(e instanceof TraceFormatError) || header === undefined) {
      await writer.abort();
      throw e;
    }
    error = e;
  }
  const output = await writer.finish({ events, dropped, dropRanges, header: header!, ...(error ? { damage: error.message } : {}) });
  return { events, dropped, dropRanges, bytesIn, output, ...(error ? { error } : {}) };
}
