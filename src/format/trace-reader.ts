import { open } from 'node:fs/promises';
import { BLOCK_HEADER_SIZE, BlockKind, blockChecksum, END_OF_STREAM_PAYLOAD } from './block.js';
import { EventOrder } from './event-order.js';
import type { BlockEvent } from './events-block.js';
import { TraceFormatError, type TraceErrorCode } from './format-error.js';
import { addDropReasons, type DropReasonCounts, noDropReasons } from './drop-reason.js';
import { LossTracker, type DropRange } from './loss-tracker.js';
import type { TraceHeader } from './stream-header.js';
import type { TraceEvent } from './trace-event.js';
import { TraceParser } from './trace-parser.js';

export interface ReadOptions {
  /**
   * How long (trace ns) an event may arrive after a sequence point and still be put in order. Default:
   * the maximum lateness the end-of-stream block records, or 100 ms when there is none (a truncated
   * file or a live stream); events later than that are delivered as they come and counted.
   */
  readonly reorderWindowNs?: number;
}

export interface ThreadSummary {
  events: number;
  dropped: number;
  /** The same drops by reason, from the drop-reasons block (format 1.1; all 0 when the stream has none). */
  dropReasons: DropReasonCounts;
  firstSeq: number;
  lastSeq: number;
}

export interface TraceSummary {
  events: number;
  dropped: number;
  threads: Record<string, ThreadSummary>;
  byEvent: Record<string, number>;
  /** Where events were lost (the first 10,000 ranges; `dropRangesOmitted` counts the rest). */
  drops: DropRange[];
  dropRangesOmitted: number;
  /**
   * Why events were dropped (format 1.1, written as the stream ends). Drops the producers did not
   * count themselves (a damaged chunk, a stream without the block) are the difference to `dropped`.
   */
  dropReasons: DropReasonCounts;
  header: TraceHeader | undefined;
  firstTimestampNs: number;
  lastTimestampNs: number;
  durationNs: number;
  bytes: number;
  bytesPerEvent: number;
  eventTypes: number;
  /** True when the stream ended with its end-of-stream block. */
  complete: boolean;
  /** Where and why reading stopped early. */
  error?: { code: TraceErrorCode; message: string; offset: number };
}

export type ByteSource = string | AsyncIterable<Uint8Array>;

export interface TraceReadable extends AsyncIterable<TraceEvent> {
  summary(): Promise<TraceSummary>;
  /** Events delivered outside timestamp order because they arrived later than the reorder window (after iteration). */
  readonly outOfOrder: number;
}

const READ_CHUNK = 1 << 20;
const DEFAULT_WINDOW_NS = 100e6;

async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new TraceFormatError('io', err.code === 'ENOENT' ? `no such file: ${path}` : `cannot open ${path}: ${err.message}`, 0);
  }
  try {
    const buf = new Uint8Array(READ_CHUNK);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, null).catch((e: NodeJS.ErrnoException) => {
        throw new TraceFormatError('io', e.code === 'EISDIR' ? `${path} is a directory, not a trace file` : `cannot read ${path}: ${e.message}`, 0);
      });
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close();
  }
}

/** The end-of-stream block's recorded maximum lateness, read from the end of a complete file. */
async function trailerLateness(path: string): Promise<number | undefined> {
  const size = BLOCK_HEADER_SIZE + END_OF_STREAM_PAYLOAD;
  try {
    const fh = await open(path, 'r');
    try {
      const { size: fileSize } = await fh.stat();
      if (fileSize < size) return undefined;
      const b = new Uint8Array(size);
      await fh.read(b, 0, size, fileSize - size);
      const v = new DataView(b.buffer);
      if (b[0] !== BlockKind.EndOfStream || v.getUint32(4, true) !== END_OF_STREAM_PAYLOAD) return undefined;
      if (blockChecksum(b, b.subarray(BLOCK_HEADER_SIZE)) !== v.getUint32(8, true)) return undefined;
      return v.getFloat64(BLOCK_HEADER_SIZE + 24, true);
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

function publicEvent(e: BlockEvent): TraceEvent {
  return {
    provider: e.provider,
    name: e.name,
    id: e.id,
    version: e.version,
    level: e.level,
    timestampNs: e.timestampNs,
    threadId: e.threadId,
    sequence: e.sequence,
    fields: e.fields,
  };
}

/**
 * Reads a trace as events in timestamp order, in memory bounded by the reorder window (not the file
 * size). A damaged stream yields every event of its intact blocks, then throws TraceFormatError with
 * the byte offset where it broke.
 */
export function readTrace(source: ByteSource, options: ReadOptions = {}): TraceReadable {
  const chunks = () => (typeof source === 'string' ? fileChunks(source) : source);
  const readable = {
    outOfOrder: 0,
    async *[Symbol.asyncIterator](): AsyncGenerator<TraceEvent> {
      let windowNs = options.reorderWindowNs;
      if (windowNs === undefined && typeof source === 'string') {
        const late = await trailerLateness(source);
        if (late !== undefined) windowNs = late;
      }
      const order = new EventOrder(windowNs ?? DEFAULT_WINDOW_NS);
      const ready: BlockEvent[] = [];
      let lastOut = -Infinity;
      const parser = new TraceParser({
        event: (e) => order.push(e),
        sequencePoint: (sp) => order.release(sp.timeNs, ready),
        end: () => order.releaseAll(ready),
      });
      const flush = function* (): Generator<TraceEvent> {
        for (const e of ready) {
          if (e.timestampNs < lastOut) readable.outOfOrder++;
          else lastOut = e.timestampNs;
          yield publicEvent(e);
        }
        ready.length = 0;
      };
      try {
        for await (const chunk of chunks()) {
          parser.push(chunk);
          yield* flush();
        }
        parser.finish();
      } catch (e) {
        order.releaseAll(ready);
        yield* flush();
        throw e;
      }
      yield* flush();
    },
    summary: () => summarize(chunks()),
  };
  return readable;
}

/** Counts without decoding fields or ordering: one pass, constant memory. Damage is reported, not thrown. */
async function summarize(chunks: AsyncIterable<Uint8Array>): Promise<TraceSummary> {
  const s: TraceSummary = {
    events: 0, dropped: 0, threads: {}, byEvent: {}, drops: [], dropRangesOmitted: 0, dropReasons: noDropReasons(), header: undefined,
    firstTimestampNs: 0, lastTimestampNs: 0, durationNs: 0, bytes: 0, bytesPerEvent: 0, eventTypes: 0, complete: false,
  };
  const loss = new LossTracker();
  let first = Infinity;
  let last = -Infinity;
  const parser = new TraceParser(
    {
      header: (h) => (s.header = h),
      metadata: () => s.eventTypes++,
      event: (e) => {
        s.events++;
        s.byEvent[e.type.key] = (s.byEvent[e.type.key] ?? 0) + 1;
        const key = String(e.threadId);
        const t = (s.threads[key] ??= { events: 0, dropped: 0, dropReasons: noDropReasons(), firstSeq: e.sequence, lastSeq: e.sequence });
        t.events++;
        if (e.sequence > t.lastSeq) t.lastSeq = e.sequence;
        loss.observe(e.threadId, e.sequence);
        if (e.timestampNs < first) first = e.timestampNs;
        if (e.timestampNs > last) last = e.timestampNs;
      },
      sequencePoint: (sp) => loss.progress(sp.threads),
      dropReasons: (threads) => {
        for (const { threadId, counts } of threads) {
          const t = (s.threads[String(threadId)] ??= { events: 0, dropped: 0, dropReasons: noDropReasons(), firstSeq: 0, lastSeq: 0 });
          addDropReasons(t.dropReasons, counts);
          addDropReasons(s.dropReasons, counts);
        }
      },
    },
    false,
  );
  try {
    for await (const chunk of chunks) {
      s.bytes += chunk.length;
      parser.push(chunk);
    }
    parser.finish();
    s.complete = true;
  } catch (e) {
    if (!(e instanceof TraceFormatError)) throw e;
    if (e.code === 'io' || e.code === 'not-a-trace' || e.code === 'unsupported-version') throw e;
    s.error = { code: e.code, message: e.message, offset: e.offset };
  }
  if (s.complete) loss.finish();
  s.dropped = loss.dropped;
  s.drops = loss.ranges;
  s.dropRangesOmitted = loss.rangesOmitted;
  for (const [threadId, n] of loss.droppedByThread) {
    const t = (s.threads[String(threadId)] ??= { events: 0, dropped: 0, dropReasons: noDropReasons(), firstSeq: 0, lastSeq: 0 });
    t.dropped += n;
  }
  if (s.events > 0) {
    s.firstTimestampNs = first;
    s.lastTimestampNs = last;
    s.durationNs = last - first;
    s.bytesPerEvent = s.bytes / s.events;
  }
  return s;
}
