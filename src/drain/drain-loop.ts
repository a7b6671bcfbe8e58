import { ByteReader } from '../format/byte-reader.js';
import { LossTracker } from '../format/loss-tracker.js';
import { decodeDescriptor } from '../format/metadata-codec.js';
import type { HeaderInfo } from '../format/stream-header.js';
import { TraceWriter, type ThreadProgress } from '../format/trace-writer.js';
import { ChunkScanner, type RecordVisitor, type SlotProgress } from '../buffers/chunk-scanner.js';
import { FairQueue } from '../buffers/fair-queue.js';
import { Ctl, DropReasonCode, type SessionMemory, SessionState } from '../buffers/session-memory.js';
import { addDropReasons, noDropReasons } from '../format/drop-reason.js';
import { MAX_EVENT_TYPES, MAX_FIELDS_IN_ALL_TYPES } from '../format/reader-limits.js';
import type { EventDescriptor } from '../schema/event-type.js';
import type { Sink } from './sink.js';
import type { DrainResult, DumpResult } from '../session/drain-protocol.js';
import { RingSnapshot } from '../buffers/ring-snapshot.js';
import { errorMessage } from '../schema/error-message.js';
import { RunningThreads } from './running-threads.js';

const IDLE_WAIT_MS = 100;
/**
 * How long a drain whose last pass found nothing sleeps: producers wake it when they take or seal a
 * chunk, so this only bounds what a thread that never yields writes into the chunk it holds.
 */
export const QUIET_WAIT_MS = 5000;
/**
 * The longest sleep of a drain whose session a native signal handler may stop (Ctl.SignalFlush): the
 * handler cannot notify, so this is how late the drain can see that stop, within the signal flush's 3 s.
 * One wake a second while idle instead of one in five.
 */
const SIGNAL_POLL_MS = 1000;
/** How long after the last event idle passes keep marking time with sequence points (see markTime). */
const IDLE_MARK_NS = 1e9;
/**
 * How long the sequence point owed for a periodic sample waits for the next sample's pass, which
 * writes it anyway (the default interval, 1 s, and half as much again for a late publication): a
 * sample at the default interval then costs the drain one pass, not two. Longer intervals get the
 * point from a pass of its own this long after the sample.
 */
const SAMPLE_MARK_WAIT_MS = 1500;
const FLUSH_BYTES = 1 << 20;
/**
 * A stopping drain takes its final count only once no live producer is in its slow path (parked
 * producers leave and publish their drops) and no thread that has not closed the session still
 * writes (see settle). Bounded: a producer that died there without being reclaimed, or a thread
 * that writes on without turning its event loop, must not hold the stop forever.
 */
const STOP_SETTLE_MS = 2000;
/**
 * A thread that has not closed a stopping session, has written nothing for this long and is asleep
 * (see RunningThreads) is not waited for. A loop that has not turned for this long is a stall by the
 * default StallMs: one that turns sooner closes the session, and its rundown is in the stream.
 */
const OPEN_QUIET_MS = 100;
/**
 * How long a thread that has not closed a stopping session, writes nothing and still runs is waited
 * for: one descheduled between a write's check and its commit gets a CPU well within it even on a
 * loaded machine, and a worker busy computing (its loop not turning) holds a stop no longer than this.
 */
const RUNNING_QUIET_MS = 500;
/** Timestamps the format carries exactly (zigzag varints of at most 53 bits): about ±52 days around the origin. */
const MAX_TIMESTAMP_NS = 2 ** 52;
const SETTLE_POLL_MS = 2;
/** At most this many scans in the last pass: a producer that keeps writing as the session stops cannot hold it. */
const FINAL_PASSES = 8;

/** The stream type id of a type left out of the stream (see DrainLoop.metadata). */
const LEFT_OUT = -1;

/** Unambiguous whatever the names hold (field names may contain ':' or ','). */
function descriptorKey(d: EventDescriptor): string {
  return JSON.stringify([d.provider, d.name, d.id, d.version, d.level, String(d.keywords), d.fields]);
}

function withReasons(counts: readonly number[]) {
  const r = noDropReasons();
  addDropReasons(r, counts);
  return r;
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
  /** Per slot: thread-local type index → stream type id (undefined: not described; LEFT_OUT: see metadata). */
  private readonly slotTypes: number[][] = [];
  /** Fields of every type the stream describes: a reader refuses a stream with more than MAX_FIELDS_IN_ALL_TYPES. */
  private fieldsDescribed = 0;
  /** Per slot: the sequence number the next event should carry; anything else is a gap. */
  private readonly expectedSeq: number[] = [];
  private readonly threadIds: number[] = [];
  private readonly originDelta: number[] = [];
  /** Per slot: events left out because their timestamp cannot be encoded (reason invalid-argument). */
  private readonly refusedTimes: number[] = [];
  /** Per slot: events left out because their type would take the stream past a reader's limits (reason too-large). */
  private readonly refusedTypes: number[] = [];
  private lastSequencePointNs = -Infinity;
  /** Doubles from the start (reset in the constructor): see TraceWriter.prevTs. */
  private maxLatenessNs = 0.5;
  private eventsWritten = 0;
  private lastEventNs = 0.5;
  /** Ctl.SampleHandOvers as the last pass that read events saw it, and whether that pass read a sample. */
  private sampleHandOvers = 0;
  private readSample = false;
  /** Ring mode: the dump being written, and the producers' counts as it began. */
  private snapshot: RingSnapshot | undefined;
  private dumpCounts: SlotProgress[] = [];

  constructor(
    private readonly memory: SessionMemory,
    private readonly sink: Sink,
    header: HeaderInfo,
    /** This thread's performance.now() origin relative to the trace origin, in ns. */
    private readonly clockDeltaNs: number,
  ) {
    this.maxLatenessNs = 0;
    this.lastEventNs = 0;
    this.scanner = new ChunkScanner(memory);
    if (sink.live) memory.liveReader = true;
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
      // A reader refuses a stream past its limits (format/reader-limits.ts) from that point on: a
      // type that would take the stream past them is left out alone, and its events are counted.
      if (this.typeIds.size >= MAX_EVENT_TYPES || this.fieldsDescribed + d.fields.length > MAX_FIELDS_IN_ALL_TYPES) {
        (this.slotTypes[slot] ??= [])[typeIndex] = LEFT_OUT;
        return;
      }
      id = this.typeIds.size + 1;
      this.typeIds.set(key, id);
      this.fieldsDescribed += d.fields.length;
      this.writer.metadata(id, d);
    }
    (this.slotTypes[slot] ??= [])[typeIndex] = id;
  }

  event(slot: number, typeIndex: number, timestampMs: number, seq: number, u8: Uint8Array, start: number, len: number): void {
    const types = this.slotTypes[slot];
    const typeId = types === undefined ? undefined : types[typeIndex];
    if (typeId === undefined) return; // A producer always describes a type first; never trust shared memory blindly.
    if (typeId === LEFT_OUT) {
      this.refusedTypes[slot] = (this.refusedTypes[slot] ?? 0) + 1;
      return;
    }
    // A thread that took its slot after this pass refreshed the slot table is new to it.
    if (this.threadIds[slot] === undefined) this.refreshSlots();
    const tsNs = Math.round(timestampMs * 1e6 + this.originDelta[slot]!);
    if (!(tsNs > -MAX_TIMESTAMP_NS && tsNs < MAX_TIMESTAMP_NS)) {
      // writeAt() with a finite but absurd time (the writer's check is one comparison): the format
      // cannot carry it. Left out, it shows as a sequence gap, counted as an invalid argument.
      this.refusedTimes[slot] = (this.refusedTimes[slot] ?? 0) + 1;
      return;
    }
    // Math.max, not a branch: the first late event would meet optimised code that never stored one.
    this.maxLatenessNs = Math.max(this.maxLatenessNs, this.lastSequencePointNs - tsNs);
    const thread = this.threadIds[slot]!;
    this.writer.event(typeId, thread, seq, tsNs, u8, start, len);
    const expected = this.expectedSeq[slot]!;
    this.expectedSeq[slot] = seq + 1;
    this.eventsWritten++;
    this.lastEventNs = Math.max(this.lastEventNs, tsNs);
    // One call for both rare cases: each cold site optimised code reaches first costs a deopt.
    if (seq !== expected || this.writer.pendingBytes > FLUSH_BYTES) this.afterEvent(thread, expected, seq);
  }

  /** After an event: the gap before it (it has `seq` where `expected` was due), and a flush once enough is pending. */
  private afterEvent(thread: number, expected: number, seq: number): void {
    if (seq !== expected) {
      this.loss.note(thread, expected);
      this.loss.observe(thread, seq);
    }
    if (this.writer.pendingBytes > FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    const bytes = this.writer.take();
    if (bytes) this.sink.write(bytes);
  }

  private progress(slots = this.scanner.progress()): ThreadProgress[] {
    return slots.map((p) => ({ threadId: p.threadId, nextSeq: p.nextSeq, dropped: p.dropped }));
  }

  /** One pass: everything committed when it started is in the stream when it ends. */
  private pass(force: boolean): number {
    Atomics.add(this.memory.i32, Ctl.DrainPasses, 1);
    const passStartNs = this.nowNs();
    this.refreshSlots();
    const visited = this.scanner.scan(this);
    if (visited > 0) {
      // Read after the scan: a sample's hand-over is counted before its chunk is sealed.
      const handOvers = Atomics.load(this.memory.i32, Ctl.SampleHandOvers);
      this.readSample = handOvers !== this.sampleHandOvers;
      this.sampleHandOvers = handOvers;
    }
    if (visited > 0 || force) this.markProgress(passStartNs, this.progress());
    this.flush();
    Atomics.store(this.memory.i32, Ctl.EventsWritten, this.eventsWritten | 0);
    this.sink.poll?.();
    this.publishExport();
    return visited;
  }

  /** An OTLP export's counts, where the owning thread reads them (ps). */
  private publishExport(): void {
    if (!this.sink.stats) return;
    const s = this.sink.stats();
    Atomics.store(this.memory.i32, Ctl.OtlpItemsSent, s.itemsSent | 0);
    Atomics.store(this.memory.i32, Ctl.OtlpItemsDropped, s.itemsDropped | 0);
  }

  private markProgress(passStartNs: number, progress: ThreadProgress[]): void {
    this.loss.progress(progress);
    this.writer.sequencePoint(passStartNs, Math.max(0, this.maxLatenessNs), progress);
    this.lastSequencePointNs = passStartNs;
  }

  /**
   * The last pass, once producers have been told to stop: a scan, the producers' counts, then scans
   * again until one finds nothing new. A producer still writing as the session stops may commit an
   * event and publish its count between a scan and the read of the counts; read last, the count
   * would call the event lost, with no reason (seen: 1 event in 20-odd stops while workers wrote).
   * Counts followed by a scan that found nothing cover only events the stream holds. Returns the
   * counts the stream ends with.
   */
  private finalPass(): SlotProgress[] {
    Atomics.add(this.memory.i32, Ctl.DrainPasses, 1);
    const passStartNs = this.nowNs();
    this.refreshSlots();
    this.scanner.scan(this);
    let slots = this.scanner.progress();
    // A producer that keeps writing cannot hold the stop: after the last scan, counts as they are.
    for (let i = 0; i < FINAL_PASSES && this.scanner.scan(this) > 0; i++) slots = this.scanner.progress();
    this.markProgress(passStartNs, this.progress(slots));
    this.flush();
    return slots;
  }

  /**
   * A live reader releases an event only once a sequence point is past it by its reorder window, so
   * after the producers go quiet the passes that run for a while still write one, every IDLE_WAIT_MS
   * at most.
   */
  private markTime(): boolean {
    return this.sink.live === true && this.nowNs() - this.lastEventNs < IDLE_MARK_NS && this.nowNs() - this.lastSequencePointNs >= IDLE_WAIT_MS * 1e6;
  }

  /**
   * Whether a live reader still lacks the sequence point IDLE_WAIT_MS past the last event, which
   * releases it from the default reorder window: the drain passes once more for it, then sleeps (when
   * the events came with a periodic sample, the next sample's pass writes it: see SAMPLE_MARK_WAIT_MS).
   * Later passes (the next event, the sink's own check) mark time for readers with a wider window.
   */
  private markOwed(): boolean {
    return this.sink.live === true && this.lastSequencePointNs < this.lastEventNs + IDLE_WAIT_MS * 1e6;
  }

  /**
   * Waits for the next pass: IDLE_WAIT_MS while there is work about, else asleep until a producer
   * takes or seals a chunk (it wakes a drain that says it sleeps). The turnover is read after saying
   * so: a chunk taken or sealed since the pass began is seen here or wakes the sleep.
   */
  private waitForWork(wake: number, quiet: boolean, turnover: number, owedToNextSample: boolean): void {
    const m = this.memory;
    if (!quiet) {
      Atomics.wait(m.i32, Ctl.DrainWake, wake, IDLE_WAIT_MS);
      return;
    }
    Atomics.store(m.i32, Ctl.DrainAsleep, 1);
    const longest = Math.min(Atomics.load(m.i32, Ctl.SignalFlush) !== 0 ? SIGNAL_POLL_MS : QUIET_WAIT_MS, owedToNextSample ? SAMPLE_MARK_WAIT_MS : Infinity);
    if (m.chunkTurnover === turnover) Atomics.wait(m.i32, Ctl.DrainWake, wake, Math.min(longest, this.sink.maxSleepMs ?? longest));
    Atomics.store(m.i32, Ctl.DrainAsleep, 0);
  }

  /** A producer's drops by reason, with the ones this drain refused added. */
  private reasonsOf(p: SlotProgress): number[] {
    const counts = [...p.droppedByReason];
    counts[DropReasonCode.InvalidArgument]! += this.refusedTimes[p.slot] ?? 0;
    counts[DropReasonCode.TooLarge]! += this.refusedTypes[p.slot] ?? 0;
    return counts;
  }

  /**
   * Closes the stream: the last gaps, the drops by reason (`uncounted(p, counted)` adds the ones no
   * producer counted as it dropped: a ring's overwritten events), the end-of-stream totals.
   */
  private endStream(slots: SlotProgress[], overwritten: (p: SlotProgress, counted: number) => number): void {
    this.expectedSeq.forEach((next, slot) => this.loss.note(this.threadIds[slot]!, next));
    this.loss.finish();
    this.writer.dropReasons(
      slots.map((p) => {
        const counts = this.reasonsOf(p);
        counts[DropReasonCode.Overwritten]! += overwritten(p, counts.reduce((a, b) => a + b, 0));
        return { threadId: p.threadId, counts };
      }),
    );
    if (this.sink.finishExport) {
      // Every event is handed to the export before it finishes, and its final counts go in the stream.
      this.flush();
      this.writer.otlpExport(this.sink.finishExport());
    }
    this.writer.end({
      events: this.eventsWritten,
      dropped: this.loss.dropped,
      endTimeNs: Math.max(this.lastEventNs, this.nowNs()),
      maxLatenessNs: Math.max(0, this.maxLatenessNs),
      threads: this.threadIds.length,
      eventTypes: this.typeIds.size,
    });
    this.flush();
  }

  /**
   * Ring mode: starts a dump of what the ring holds now, every thread's newest events merged in time
   * order, into this loop's sink, as one complete stream (continueDump writes it, a slice at a time).
   * What a thread attempted that the ring no longer holds is a drop range, counted as overwritten
   * unless the producer counted it as it dropped it. The counts are read once, as the chunks are
   * listed: a drop between two readings would be a reason without a gap.
   */
  startDump(): void {
    this.refreshSlots();
    this.snapshot = new RingSnapshot(this.memory, (slot) => (this.originDelta[slot] ?? 0) / 1e6);
    this.dumpCounts = this.scanner.progress();
  }

  /**
   * Writes about `sliceBytes` more of the dump into the sink (at least one event); true once the
   * stream is complete. Throws what the sink throws.
   */
  continueDump(sliceBytes: number): boolean {
    const snapshot = this.snapshot!;
    const visitedAll = snapshot.visit(this, () => this.writer.pendingBytes < sliceBytes);
    if (visitedAll) {
      const slots = this.dumpCounts;
      const progress = slots.map((p) => ({ threadId: p.threadId, nextSeq: Math.max(p.nextSeq, snapshot.nextSeq(p.slot)), dropped: p.dropped }));
      this.writer.sequencePoint(this.nowNs(), 0, progress);
      this.loss.progress(progress);
      this.endStream(slots, (p, counted) => Math.max(0, (this.loss.droppedByThread.get(p.threadId) ?? 0) - counted));
    }
    this.flush();
    return visitedAll;
  }

  /** Releases the sink once the dump is complete, or abandoned (`error`); what was written, and why it ended early. */
  finishDump(error?: string): DumpResult {
    try {
      this.sink.close();
    } catch (e) {
      error ??= errorMessage(e);
    }
    return { eventsWritten: this.eventsWritten, eventsDropped: this.loss.dropped, bytesWritten: this.writer.bytesTaken, ...(error === undefined ? {} : { error }) };
  }

  /**
   * Waits (bounded) until no live producer is inside its slow path, releasing parked ones meanwhile,
   * and no thread still writes without having closed the session (heard of the stop, sealed,
   * published): such a thread commits into the chunk it holds, and would after the last count. A
   * thread that has not closed it is waited for while it writes, and for RUNNING_QUIET_MS of quiet
   * while it runs (on a CPU or waiting for one: descheduled between a write's check and its commit,
   * or computing towards its rundown); one that writes nothing for OPEN_QUIET_MS while asleep (its loop idle, blocked in Atomics.wait, a
   * worker that ended without closing it) is not: the last pass reads what it holds, and what it
   * writes when it wakes is lost uncounted. Nor are other threads at the process's exit: they end
   * with it. Where the kernel cannot be asked (not Linux), quiet for OPEN_QUIET_MS is enough.
   */
  private settle(): void {
    const m = this.memory;
    const queue = this.scanner.queue;
    const deadline = performance.now() + STOP_SETTLE_MS;
    const running = new RunningThreads();
    let quietSince = performance.now();
    let openSeq = -1;
    try {
      while (performance.now() < deadline) {
        queue.skipAbandoned();
        const slots = this.scanner.progress();
        if (!slots.some((p) => p.inSlowPath && !p.dead)) {
          const open = slots.filter((p) => p.open && !p.dead);
          if (Atomics.load(m.i32, Ctl.Exiting) !== 0 || open.length === 0) return;
          // What the open threads committed since the last look: taken now, and a sign they still write.
          this.pass(false);
          const seq = this.scanner.progress().reduce((sum, p) => (p.open && !p.dead ? sum + p.nextSeq : sum), 0);
          const now = performance.now();
          const tids = open.map((p) => p.osThreadId);
          if (seq !== openSeq) {
            quietSince = now;
            running.mark(tids, now);
          } else if (now - quietSince >= (running.anyRunning(tids, now) ? RUNNING_QUIET_MS : OPEN_QUIET_MS)) return;
          openSeq = seq;
        }
        queue.wakeAll();
        Atomics.wait(m.i32, Ctl.DrainWake, Atomics.load(m.i32, Ctl.DrainWake), SETTLE_POLL_MS);
      }
    } finally {
      running.close();
    }
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
        const turnover = m.chunkTurnover;
        let quiet = false;
        let owedToNextSample = false;
        if (!this.sink.congested) {
          // A point still owed is written by whatever pass comes next. A pass that found nothing (woken
          // by the seal of a chunk whose sample an earlier pass read) cannot count on markTime: it stops
          // IDLE_MARK_NS after the last event, before SAMPLE_MARK_WAIT_MS is up, and the point owed
          // would wait for a next sample that may never come.
          lastVisited = this.pass(lastVisited > 0 || this.markTime() || this.markOwed());
          const owed = this.markOwed();
          // The next sample wakes this drain (a live reader's), and its pass writes the point owed.
          owedToNextSample = owed && this.readSample;
          // Nothing came, or nothing is left anywhere (every chunk free: the next event needs a chunk
          // taken, which wakes this drain). Parked producers wait for chunks only passes free.
          quiet = (lastVisited === 0 || m.allChunksFree) && (!owed || owedToNextSample) && this.scanner.queue.empty;
        }
        // A parked producer that died is skipped here even when no other producer is left to notice.
        this.scanner.queue.checkHead();
        this.waitForWork(wake, quiet, turnover, owedToNextSample);
      }
      if (m.state === SessionState.Failed) throw new Error('session failed');
      this.settle();
      // Producers have been told to stop; those in their slow path have left it. Take what they committed.
      this.endStream(this.finalPass(), () => 0);
    } catch (e) {
      error = errorMessage(e);
      m.setState(SessionState.Failed);
      new FairQueue(m).wakeAll();
    }
    try {
      this.sink.close();
    } catch (e) {
      error ??= errorMessage(e);
    }
    // Lets an owner that is exiting (and so cannot receive messages) wait for the flush in shared memory.
    if (error === undefined) m.setState(SessionState.Stopped);
    return {
      eventsWritten: this.eventsWritten,
      producers: this.scanner.progress().map((p) => ({
        threadId: p.threadId,
        dropped: p.dropped + (this.refusedTimes[p.slot] ?? 0) + (this.refusedTypes[p.slot] ?? 0),
        droppedByReason: withReasons(this.reasonsOf(p)),
        parks: p.parks,
        longestParkNs: p.longestParkNs,
      })),
      eventsDropped: this.loss.dropped,
      bytesWritten: this.writer.bytesTaken,
      ...(this.sink.stats ? { otlp: this.sink.stats() } : {}),
      ...(error === undefined ? {} : { error }),
    };
  }
}
