import { open, type FileHandle } from 'node:fs/promises';
import { BLOCK_HEADER_SIZE, BlockKind, blockChecksum, END_OF_STREAM_PAYLOAD } from './block.js';
import type { BlockEvent, RawPayload } from './events-block.js';
import { TraceFormatError, type TraceErrorCode } from './format-error.js';
import type { OtlpExportStats } from './otlp-export-stats.js';
import { addDropReasons, type DropReasonCounts, noDropReasons } from './drop-reason.js';
import { LossTracker, type DropRange } from './loss-tracker.js';
import { MAX_REORDER_BYTES, MAX_REORDER_WINDOW_NS, MAX_THREADS } from './reader-limits.js';
import { ReorderWindow } from './reorder-window.js';
import { checkReorderWindow } from './read-options.js';
import type { TraceHeader } from './stream-header.js';
import type { StreamEventType, TraceEvent } from './trace-event.js';
import { TraceParser } from './trace-parser.js';
import { traceReadChannel, type TraceReadProgress } from './trace-read-channel.js';

export interface ReadOptions {
  /**
   * How long (trace ns) an event may arrive after a sequence point and still be put in order. Default:
   * the maximum lateness the end-of-stream block records, or 100 ms when there is none (a truncated
   * file or a live stream); events later than that are delivered as they come and counted. At most
   * 60 s, and the window never holds more than about 16 MiB of events (see docs/FORMAT.md).
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
  /**
   * What the session's OTLP export sent and dropped (format 1.2, written as the stream ends; absent
   * without an export). These are not the trace's drops: the file holds every event of them.
   */
  otlp?: OtlpExportStats;
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
   * 'timestamp' (the default) puts events in timestamp order, as iteration does, through the same
   * bounded reorder window. 'stream' hands them over as the stream has them (per thread in sequence
   * order) and holds nothing back: for consumers that sort themselves.
   */
  readonly order?: 'timestamp' | 'stream';
}

/** What a skim went through: its events, what was lost, and where and why it stopped early. */
export interface SkimResult {
  readonly header: TraceHeader | undefined;
  readonly events: number;
  readonly dropped: number;
  /** True when the stream ended with its end-of-stream block. */
  readonly complete: boolean;
  readonly error?: { code: TraceErrorCode; message: string; offset: number };
}

export interface TraceReadable extends AsyncIterable<TraceEvent> {
  summary(): Promise<TraceSummary>;
  /**
   * Every event in stream order, its fields not decoded: `onEvent` gets the event (empty fields) and
   * where its payload lies, both valid during the call only (rewritten for the next event: copy what
   * you keep; RawPayloads reads fields there, or decodes it), with each payload's fixed part checked. For tools that read a few fields of most events and
   * decode few, at several times the speed of batches(). Damage is reported, not thrown, as by
   * summary(); a handler's own error ends the skim.
   */
  skim(onEvent: (e: BlockEvent, payload: RawPayload) => void): Promise<SkimResult>;
  /**
   * The events in batches (at most 1,024 each), with their types and the losses they reveal:
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
 * events die young.
 */
const READ_AHEAD = 1 << 20;
const READ_CHUNK = 1 << 16;
/**
 * Events in one batch at most: a 16 MiB block of tiny events is handed over in pieces, never at once,
 * and what a consumer holds while it works on a batch stays small enough to die young (batches of
 * 4,096 let the collector promote a batch's worth at each scavenge: in timestamp order, 1.9× the peak
 * RSS and 0.7× the throughput of batches of 1,024).
 */
const BATCH_EVENTS = 1024;
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
    // Progress for whoever listens (the CLI's progress line); nothing at all otherwise.
    const size = traceReadChannel.hasSubscribers ? (await fh.stat()).size : 0;
    let bytesRead = 0;
    const publish = (): void => {
      if (traceReadChannel.hasSubscribers) traceReadChannel.publish({ path, bytesRead, size } satisfies TraceReadProgress);
    };
    publish();
    for (;;) {
      const n = await next;
      if (n === 0) return;
      bytesRead += n;
      publish();
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
      const late = v.getFloat64(BLOCK_HEADER_SIZE + 24, true);
      // A hostile or damaged value must not open the window: read it as "not recorded".
      return late >= 0 && late <= Number.MAX_SAFE_INTEGER ? late : undefined;
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Reads a trace as events in timestamp order, in memory bounded by the reorder window (not the file
 * size). A damaged stream yields every event of its intact blocks, then throws TraceFormatError with
 * the byte offset where it broke.
 */
export function readTrace(source: ByteSource, options: ReadOptions = {}): TraceReadable {
  checkReorderWindow(options.reorderWindowNs);
  const chunks = () => (typeof source === 'string' ? fileChunks(source) : source);
  const reorderWindow = async (): Promise<ReorderWindow> => {
    let windowNs = options.reorderWindowNs;
    if (windowNs === undefined && typeof source === 'string') {
      const late = await trailerLateness(source);
      if (late !== undefined) windowNs = late;
    }
    return new ReorderWindow(Math.min(windowNs ?? DEFAULT_WINDOW_NS, MAX_REORDER_WINDOW_NS), MAX_REORDER_BYTES);
  };
  const readable = {
    outOfOrder: 0,
    async *[Symbol.asyncIterator](): AsyncGenerator<TraceEvent> {
      const reorder = await reorderWindow();
      let lastOut = -Infinity;
      // The parser pauses as soon as an event may leave, so events are decoded one at a time as they
      // are handed on, never a block's worth at once.
      const parser: TraceParser = new TraceParser(
        {
          event: (e, payload) => {
            reorder.push(e, payload);
            if (reorder.ready) parser.pause();
          },
          sequencePoint: (sp) => {
            reorder.release(sp.timeNs);
            if (reorder.ready) parser.pause();
          },
          end: () => reorder.releaseAll(),
        },
        'check',
      );
      const deliver = (e: TraceEvent): TraceEvent => {
        if (e.timestampNs < lastOut) readable.outOfOrder++;
        else lastOut = e.timestampNs;
        return e;
      };
      // Plain yields, not yield* of a generator: each delegated value would cost one more await.
      let failed = false;
      let failure: unknown;
      try {
        for await (const chunk of chunks()) {
          parser.push(chunk);
          for (;;) {
            for (let e = reorder.next(); e !== undefined; e = reorder.next()) yield deliver(e);
            if (!parser.paused) break;
            parser.resume();
          }
        }
        parser.finish();
      } catch (e) {
        failed = true;
        failure = e;
        reorder.releaseAll();
      }
      for (let e = reorder.next(); e !== undefined; e = reorder.next()) yield deliver(e);
      if (failed) throw failure;
    },
    batches: (batchOptions: BatchOptions = {}) => {
      const order = batchOptions.order ?? 'timestamp';
      if (order !== 'timestamp' && order !== 'stream') throw new RangeError(`tracepipe: batches() order must be 'timestamp' or 'stream'; got ${String(order)}`);
      return readBatches(order);
    },
    summary: () => summarize(chunks()),
    skim: (onEvent: (e: BlockEvent, payload: RawPayload) => void) => skim(chunks(), onEvent),
  };

  async function* readBatches(order: 'timestamp' | 'stream'): AsyncGenerator<EventBatch> {
    // Stream order holds nothing; timestamp order holds what the bounded reorder window holds.
    const reorder = order === 'timestamp' ? await reorderWindow() : undefined;
    let events: BlockEvent[] = [];
    let drops: PlacedDrop[] = [];
    let header: TraceHeader | undefined;
    let announced = false;
    let bytesRead = 0;
    let lastOut = -Infinity;
    let revealedAtNs = 0;
    const loss = new LossTracker(0, (r) => drops.push({ ...r, timestampNs: revealedAtNs }));
    // The parser pauses when a batch is full (stream order) or an event may leave the window, so a
    // batch never holds more than BATCH_EVENTS events, whatever the size of a block.
    const parser: TraceParser = new TraceParser(
      {
        header: (h) => (header = h),
        event: (e, payload) => {
          revealedAtNs = e.timestampNs;
          loss.observe(e.threadId, e.sequence);
          if (loss.threads > MAX_THREADS) throw tooManyThreads(parser.offset);
          if (reorder) {
            reorder.push(e, payload);
            if (reorder.ready) parser.pause();
          } else {
            events.push(e);
            if (events.length >= BATCH_EVENTS) parser.pause();
          }
        },
        sequencePoint: (sp) => {
          loss.progress(sp);
          if (!reorder) return;
          reorder.release(sp.timeNs);
          if (reorder.ready) parser.pause();
        },
        end: (totals) => {
          reorder?.releaseAll();
          revealedAtNs = totals.endTimeNs;
          loss.finish();
        },
      },
      // Timestamp order decodes an event when it leaves the window (see ReorderWindow).
      reorder ? 'check' : true,
    );
    // The first batch comes with the header even when it has no events, so an empty trace still converts.
    const take = (): EventBatch | undefined => {
      if (!header || (announced && events.length === 0 && drops.length === 0)) return undefined;
      const batch: EventBatch = { header, events, drops, bytesRead };
      announced = true;
      events = [];
      drops = [];
      return batch;
    };
    /** Moves what may leave the window into the batch; yields every full batch. */
    const full = function* (): Generator<EventBatch> {
      if (reorder) {
        for (let e = reorder.next(true); e !== undefined; e = reorder.next(true)) {
          if (e.timestampNs < lastOut) readable.outOfOrder++;
          else lastOut = e.timestampNs;
          events.push(e);
          if (events.length >= BATCH_EVENTS) yield take()!;
        }
      } else if (events.length >= BATCH_EVENTS) yield take()!;
    };
    let failed = false;
    let failure: unknown;
    try {
      for await (const chunk of chunks()) {
        bytesRead += chunk.length;
        parser.push(chunk);
        for (;;) {
          yield* full();
          if (!parser.paused) break;
          parser.resume();
        }
        const batch = take();
        if (batch) yield batch;
      }
      parser.finish();
    } catch (e) {
      failed = true;
      failure = e;
      reorder?.releaseAll();
    }
    yield* full();
    const batch = take();
    if (batch) yield batch;
    if (failed) throw failure;
  }

  return readable;
}

function tooManyThreads(offset: number): TraceFormatError {
  return new TraceFormatError('limit', `trace exceeds a reader limit: more than ${MAX_THREADS} threads at byte ${offset}`, offset);
}

async function skim(chunks: AsyncIterable<Uint8Array>, onEvent: (e: BlockEvent, payload: RawPayload) => void): Promise<SkimResult> {
  const loss = new LossTracker();
  let header: TraceHeader | undefined;
  let events = 0;
  const parser: TraceParser = new TraceParser(
    {
      header: (h) => (header = h),
      event: (e, payload) => {
        events++;
        loss.observe(e.threadId, e.sequence);
        if (loss.threads > MAX_THREADS) throw tooManyThreads(parser.offset);
        onEvent(e, payload);
      },
      sequencePoint: (sp) => loss.progress(sp),
    },
    false,
  );
  try {
    for await (const chunk of chunks) parser.push(chunk);
    parser.finish();
  } catch (e) {
    if (!(e instanceof TraceFormatError) || e.code === 'io' || e.code === 'not-a-trace' || e.code === 'unsupported-version') throw e;
    return { header, events, dropped: loss.dropped, complete: false, error: { code: e.code, message: e.message, offset: e.offset } };
  }
  loss.finish();
  return { header, events, dropped: loss.dropped, complete: true };
}

/** Counts without decoding fields or ordering: one pass, memory bounded by the reader limits. Damage is reported, not thrown. */
async function summarize(chunks: AsyncIterable<Uint8Array>): Promise<TraceSummary> {
  const s: TraceSummary = {
    events: 0, dropped: 0, threads: {}, byEvent: {}, drops: [], dropRangesOmitted: 0, dropReasons: noDropReasons(), header: undefined,
    firstTimestampNs: 0, lastTimestampNs: 0, durationNs: 0, bytes: 0, bytesPerEvent: 0, eventTypes: 0, complete: false,
  };
  const loss = new LossTracker();
  const threads = new Map<number, ThreadSummary>();
  const byType = new Map<StreamEventType, number>();
  let first = Infinity;
  let last = -Infinity;
  /** A thread's row, made on first sight (a hostile file may not make more than MAX_THREADS). */
  const threadOf = (threadId: number, firstSeq: number): ThreadSummary => {
    let t = threads.get(threadId);
    if (!t) {
      if (threads.size >= MAX_THREADS) throw tooManyThreads(parser.offset);
      t = { events: 0, dropped: 0, dropReasons: noDropReasons(), firstSeq, lastSeq: firstSeq };
      threads.set(threadId, t);
    }
    return t;
  };
  const parser: TraceParser = new TraceParser(
    {
      header: (h) => (s.header = h),
      metadata: () => s.eventTypes++,
      event: (e) => {
        const t = threadOf(e.threadId, e.sequence);
        s.events++;
        byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
        t.events++;
        if (e.sequence > t.lastSeq) t.lastSeq = e.sequence;
        loss.observe(e.threadId, e.sequence);
        if (e.timestampNs < first) first = e.timestampNs;
        if (e.timestampNs > last) last = e.timestampNs;
      },
      sequencePoint: (sp) => loss.progress(sp),
      dropReasons: (list) => {
        for (const { threadId, counts } of list) {
          addDropReasons(threadOf(threadId, 0).dropReasons, counts);
          addDropReasons(s.dropReasons, counts);
        }
      },
      otlpExport: (stats) => (s.otlp = stats),
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
    threadOf(threadId, 0).dropped += n;
  }
  for (const [threadId, t] of threads) s.threads[String(threadId)] = t;
  // Types that share a name (a redefinition) share a row.
  for (const [type, n] of byType) s.byEvent[type.key] = (s.byEvent[type.key] ?? 0) + n;
  if (s.events > 0) {
    s.firstTimestampNs = first;
    s.lastTimestampNs = last;
    s.durationNs = last - first;
    s.bytesPerEvent = s.bytes / s.events;
  }
  return s;
}
