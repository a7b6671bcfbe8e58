import { ByteReader } from '../format/byte-reader.js';
import { LossTracker } from '../format/loss-tracker.js';
import { decodeDescriptor } from '../format/metadata-codec.js';
import type { HeaderInfo } from '../format/stream-header.js';
import { TraceWriter, type ThreadProgress } from '../format/trace-writer.js';
import { ChunkScanner, type RecordVisitor } from '../buffers/chunk-scanner.js';
import { FairQueue } from '../buffers/fair-queue.js';
import { Ctl, type SessionMemory, SessionState } from '../buffers/session-memory.js';
import type { EventDescriptor } from '../schema/event-type.js';
import type { Sink } from './sink.js';
import type { DrainResult } from '../session/drain-protocol.js';

const IDLE_WAIT_MS = 100;
/** How long after the last event idle passes keep marking time with sequence points (see markTime). */
const IDLE_MARK_NS = 1e9;
const FLUSH_BYTES = 1 << 20;

function descriptorKey(d: EventDescriptor): string {
  return `${d.provider}\0${d.name}\0${d.id}\0${d.version}\0${d.level}\0${d.keywords}\0${d.fields.map((f) => f.join(':')).join(',')}`;
}

/**
 * Empties one session's buffer into a sink: merges every thread's committed records, puts their
 * timestamps on the trace clock, gives each event type one stream-wide id (metadata first), and
 * closes each pass with a sequence point. Runs on its own thread so producers only ever copy bytes.
 */
export class DrainLoop implements RecordVisitor {
  private readonly scanner: ChunkScanner;
  private readonly writer = new TraceWriter();
  /** Counts only: the reader works out the ranges from the stream. */
  private readonly loss = new LossTracker(0);
  private readonly typeIds = new Map<string, number>();
  /** Per slot: thread-local type index → stream type id (0: not described). */
  private readonly slotTypes: number[][] = [];
  /** Per slot: the sequence number the next event should carry; anything else is a gap. */
  private readonly expectedSeq: number[] = [];
  private readonly threadIds: number[] = [];
  private readonly originDelta: number[] = [];
  private lastSequencePointNs = -Infinity;
  private maxLatenessNs = 0;
  private eventsWritten = 0;
  private lastEventNs = 0;

  constructor(
    private readonly memory: SessionMemory,
    private readonly sink: Sink,
    header: HeaderInfo,
    /** This thread's performance.now() origin relative to the trace origin, in ns. */
    private readonly clockDeltaNs: number,
  ) {
    this.scanner = new ChunkScanner(memory);
    this.writer.header(header);
    this.flush();
  }

  private nowNs(): number {
    return Math.round(performance.now() * 1e6 + this.clockDeltaNs);
  }

  private refreshSlots(): void {
    for (const p of this.scanner.progress()) {
      this.threadIds[p.slot] = p.threadId;
      this.originDelta[p.slot] = p.originDeltaNs;
      this.expectedSeq[p.slot] ??= 0;
    }
  }

  metadata(slot: number, u8: Uint8Array, start: number, len: number): void {
    const r = new ByteReader(u8, start, start + len);
    const typeIndex = r.varint();
    const d = decodeDescriptor(r);
    const key = descriptorKey(d);
    let id = this.typeIds.get(key);
    if (id === undefined) {
      id = this.typeIds.size + 1;
      this.typeIds.set(key, id);
      this.writer.metadata(id, d);
    }
    (this.slotTypes[slot] ??= [])[typeIndex] = id;
  }

  event(slot: number, typeIndex: number, timestampMs: number, seq: number, u8: Uint8Array, start: number, len: number): void {
    const types = this.slotTypes[slot];
    const typeId = types === undefined ? undefined : types[typeIndex];
    if (typeId === undefined) return; // A producer always describes a type first; never trust shared memory blindly.
    // A thread that took its slot after this pass refreshed the slot table is new to it.
    if (this.threadIds[slot] === undefined) this.refreshSlots();
    const tsNs = Math.round(timestampMs * 1e6 + this.originDelta[slot]!);
    const late = this.lastSequencePointNs - tsNs;
    if (late > this.maxLatenessNs) this.maxLatenessNs = late;
    const thread = this.threadIds[slot]!;
    this.writer.event(typeId, thread, seq, tsNs, u8, start, len);
    if (seq !== this.expectedSeq[slot]) {
      this.loss.note(thread, this.expectedSeq[slot]!);
      this.loss.observe(thread, seq);
    }
    this.expectedSeq[slot] = seq + 1;
    this.eventsWritten++;
    if (tsNs > this.lastEventNs) this.lastEventNs = tsNs;
    if (this.writer.pendingBytes > FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    const bytes = this.writer.take();
    if (bytes) this.sink.write(bytes);
  }

  private progress(): ThreadProgress[] {
    return this.scanner.progress().map((p) => ({ threadId: p.threadId, nextSeq: p.nextSeq, dropped: p.dropped }));
  }

  /** One pass: everything committed when it started is in the stream when it ends. */
  private pass(force: boolean): number {
    const passStartNs = this.nowNs();
    this.refreshSlots();
    const visited = this.scanner.scan(this);
    if (visited > 0 || force) {
      const progress = this.progress();
      this.loss.progress(progress);
      this.writer.sequencePoint(passStartNs, Math.max(0, this.maxLatenessNs), progress);
      this.lastSequencePointNs = passStartNs;
    }
    this.flush();
    return visited;
  }

  /**
   * A live reader releases an event only once a sequence point is past it by its reorder window, so
   * after the producers go quiet idle passes keep writing one every IDLE_WAIT_MS for a while.
   */
  private markTime(): boolean {
    const now = this.nowNs();
    return now - this.lastEventNs < IDLE_MARK_NS && now - this.lastSequencePointNs >= IDLE_WAIT_MS * 1e6;
  }

  /** Runs until the session stops or the sink fails; never throws. */
  run(): DrainResult {
    const m = this.memory;
    let error: string | undefined;
    try {
      let lastVisited = 0;
      for (;;) {
        const wake = Atomics.load(m.i32, Ctl.DrainWake);
        const state = m.state;
        if (state >= SessionState.Stopping) break;
        m.prefault();
        if (!this.sink.congested) lastVisited = this.pass(lastVisited > 0 || this.markTime());
        Atomics.wait(m.i32, Ctl.DrainWake, wake, IDLE_WAIT_MS);
      }
      if (m.state === SessionState.Failed) throw new Error('session failed');
      // Final pass: producers have been told to stop; take everything they committed.
      this.pass(true);
      this.expectedSeq.forEach((next, slot) => this.loss.note(this.threadIds[slot]!, next));
      this.loss.finish();
      this.writer.end({
        events: this.eventsWritten,
        dropped: this.loss.dropped,
        endTimeNs: Math.max(this.lastEventNs, this.nowNs()),
        maxLatenessNs: Math.max(0, this.maxLatenessNs),
        threads: this.threadIds.length,
        eventTypes: this.typeIds.size,
      });
      this.flush();
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      m.setState(SessionState.Failed);
      new FairQueue(m).wakeAll();
    }
    try {
      this.sink.close();
    } catch (e) {
      error ??= e instanceof Error ? e.message : String(e);
    }
    // Lets an owner that is exiting (and so cannot receive messages) wait for the flush in shared memory.
    if (error === undefined) m.setState(SessionState.Stopped);
    return {
      eventsWritten: this.eventsWritten,
      producers: this.scanner.progress().map((p) => ({ threadId: p.threadId, dropped: p.dropped, parks: p.parks, longestParkNs: p.longestParkNs })),
      eventsDropped: this.loss.dropped,
      bytesWritten: this.writer.bytesTaken,
      ...(error === undefined ? {} : { error }),
    };
  }
}
