import { open, type FileHandle } from 'node:fs/promises';
import { BLOCK_HEADER_SIZE, BlockKind, blockChecksum, END_OF_STREAM_PAYLOAD } from './block.js';
import { EventOrder } from './event-order.js';
import type { BlockEvent } from './events-block.js';
import { TraceFormatError, type TraceErrorCode } from './format-error.js';
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

/** A loss, placed in time: at the event that revealed it, or at the end of the stream for attempts after a thread's last event. */
export interface PlacedDrop extends DropRange {
  readonly timestampNs: number;
}

export interface EventBatch {
  readonly header: TraceHeader;
  /** Events with their stream types, continuing the previous batch. */
  readonly events: readonly BlockEvent[];
  /** Losses revealed since the previous batch, in stream order. */
  readonly drops: readonly PlacedDrop[];
  /** Bytes of input read so far. */
  readonly bytesRead: number;
}

export interface BatchOptions {
  /**
   * 'timestamp' (the default) puts events in timestamp order, as iteration does, holding back the
   * events of one reorder window. 'stream' hands them over as the stream has them (per thread in
   * sequence order) and holds nothing back: for consumers that sort themselves.
   */
  readonly order?: 'timestamp' | 'stream';
}

export interface TraceReadable extends AsyncIterable<TraceEvent> {
  summary(): Promise<TraceSummary>;
  /**
   * The events in batches (one per chunk of input), with their types and the losses they reveal:
   * for tools that go through millions of events, where a promise per event costs more than the
   * event. A damaged stream yields the batches of its intact blocks, then throws as iteration does.
   */
  batches(options?: BatchOptions): AsyncIterable<EventBatch>;
  /** Events delivered outside timestamp order because they arrived later than the reorder window (after iteration). */
  readonly outOfOrder: number;
}

/**
 * The file is read 1 MiB at a time, the next read running while the current one is parsed, and handed
 * over in 64 KiB chunks: few reads and no wait between them, and batches small enough that their
 * events die young (bigger batches cost more in garbage collection than they save).
 */
const READ_AHEAD = 1 << 20;
const READ_CHUNK = 1 << 16;
const DEFAULT_WINDOW_NS = 100e6;

async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new TraceFormatError('io', err.code === 'ENOENT' ? `no such file: ${path}` : `cannot open ${path}: ${err.message}`, 0);
  }
  const read = (buf: Uint8Array): Promise<number> =>
    fh.read(buf, 0, buf.length, null).then(
      (r) => r.bytesRead,
      (e: NodeJS.ErrnoException) => {
        throw new TraceFormatError('io', e.code === 'EISDIR' ? `${path} is a directory, not a trace file` : `cannot read ${path}: ${e.message}`, 0);
      },
    );
  const buffers = [new Uint8Array(READ_AHEAD), new Uint8Array(READ_AHEAD)];
  let current = 0;
  let next = read(buffers[0]!);
  try {
    for (;;) {
      const n = await next;
      if (n === 0) return;
      const buf = buffers[current]!;
      current ^= 1;
      next = read(buffers[current]!);
      for (let at = 0; at < n; at += READ_CHUNK) yield buf.subarray(at, Math.min(n, at + READ_CHUNK));
    }
  } finally {
    // A consumer that stops early leaves a read in flight: it must end before the file closes.
    await next.catch(() => undefined);
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
      for await (const batch of readBatches(false)) for (const e of batch.events) yield publicEvent(e);
    },
    batches: (batchOptions: BatchOptions = {}) => readBatches(true, batchOptions.order ?? 'timestamp'),
    summary: () => summarize(chunks()),
  };

  async function* readBatches(placeDrops: boolean, order: 'timestamp' | 'stream' = 'timestamp'): AsyncGenerator<EventBatch> {
    let windowNs = options.reorderWindowNs;
    if (order === 'timestamp' && windowNs === undefined && typeof source === 'string') {
      const late = await trailerLateness(source);
      if (late !== undefined) windowNs = late;
    }
    const eventOrder = order === 'timestamp' ? new EventOrder(windowNs ?? DEFAULT_WINDOW_NS) : undefined;
    let ready: BlockEvent[] = [];
    let drops: PlacedDrop[] = [];
    let header: TraceHeader | undefined;
    let announced = false;
    let bytesRead = 0;
    let lastOut = -Infinity;
    let revealedAtNs = 0;
    const loss = placeDrops ? new LossTracker(0, (r) => drops.push({ ...r, timestampNs: revealedAtNs })) : undefined;
    const parser = new TraceParser({
      header: (h) => (header = h),
      event: (e) => {
        if (loss) {
          revealedAtNs = e.timestampNs;
          loss.observe(e.threadId, e.sequence);
        }
        if (eventOrder) eventOrder.push(e);
        else ready.push(e);
      },
      sequencePoint: (sp) => {
        loss?.progress(sp.threads);
        eventOrder?.release(sp.timeNs, ready);
      },
      end: (totals) => {
        eventOrder?.releaseAll(ready);
        if (loss) {
          revealedAtNs = totals.endTimeNs;
          loss.finish();
        }
      },
    });
    // The first batch comes with the header even when it has no events, so an empty trace still converts.
    const take = (): EventBatch | undefined => {
      if (!header || (announced && ready.length === 0 && drops.length === 0)) return undefined;
      if (eventOrder) {
        for (const e of ready) {
          if (e.timestampNs < lastOut) readable.outOfOrder++;
          else lastOut = e.timestampNs;
        }
      }
      const batch: EventBatch = { header, events: ready, drops, bytesRead };
      announced = true;
      ready = [];
      drops = [];
      return batch;
    };
    try {
      for await (const chunk of chunks()) {
        bytesRead += chunk.length;
        parser.push(chunk);
        const batch = take();
        if (batch) yield batch;
      }
      parser.finish();
    } catch (e) {
      eventOrder?.releaseAll(ready);
      const batch = take();
      if (batch) yield batch;
      throw e;
    }
    const batch = take();
    if (batch) yield batch;
  }

  return readable;
}

/** Counts without decoding fields or ordering: one pass, constant memory. Damage is reported, not thrown. */
async function summarize(chunks: AsyncIterable<Uint8Array>): Promise<TraceSummary> {
  const s: TraceSummary = {
    events: 0, dropped: 0, threads: {}, byEvent: {}, drops: [], dropRangesOmitted: 0, header: undefined,
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
        const t = (s.threads[key] ??= { events: 0, dropped: 0, firstSeq: e.sequence, lastSeq: e.sequence });
        t.events++;
        if (e.sequence > t.lastSeq) t.lastSeq = e.sequence;
        loss.observe(e.threadId, e.sequence);
        if (e.timestampNs < first) first = e.timestampNs;
        if (e.timestampNs > last) last = e.timestampNs;
      },
      sequencePoint: (sp) => loss.progress(sp.threads),
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
    const t = (s.threads[String(threadId)] ??= { events: 0, dropped: 0, firstSeq: 0, lastSeq: 0 });
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
