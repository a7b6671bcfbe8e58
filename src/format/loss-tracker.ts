import { SequencePoint } from './sequence-point.js';
import type { ThreadProgress } from './trace-writer.js';

export interface DropRange {
  readonly threadId: number;
  /** First and last sequence numbers that never arrived. */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly count: number;
}

/**
 * Turns per-thread sequence numbers into drop ranges: every gap is a lost attempt, and where it was.
 * It keeps at most `maxRanges` ranges (memory must not grow with the trace); past that, drops are
 * still counted and `rangesOmitted` says how many ranges were not kept.
 */
export class LossTracker {
  /** Per thread, the sequence number its next event should have (the current run's thread: see runNext). */
  private readonly nextSeq = new Map<number, number>();
  /**
   * The thread of the last event and the sequence number its next one should have, kept out of
   * nextSeq while its run lasts: events come in runs of one thread, and a Map look-up and update per
   * event showed in the readers' profiles.
   */
  private runThread = -1;
  private runNext = 0;
  private lastProgress: readonly ThreadProgress[] | SequencePoint = [];
  readonly ranges: DropRange[] = [];
  rangesOmitted = 0;
  dropped = 0;
  readonly droppedByThread = new Map<number, number>();

  constructor(
    private readonly maxRanges = 10_000,
    /** Told of every gap as it shows, before it is merged into a kept range (for tools that place each loss). */
    private readonly onGap?: (range: DropRange) => void,
  ) {}

  /** Threads seen so far. */
  get threads(): number {
    return this.nextSeq.size;
  }

  observe(threadId: number, seq: number): void {
    if (threadId === this.runThread && seq === this.runNext) {
      this.runNext = seq + 1;
      return;
    }
    this.endRun();
    const expected = this.nextSeq.get(threadId) ?? 0;
    if (seq > expected) this.gap(threadId, expected, seq - 1);
    const next = Math.max(expected, seq + 1);
    this.nextSeq.set(threadId, next);
    this.runThread = threadId;
    this.runNext = next;
  }

  /** For callers that check continuity themselves: `threadId`'s events so far end just before `nextSeq`. */
  note(threadId: number, nextSeq: number): void {
    this.endRun();
    this.nextSeq.set(threadId, nextSeq);
  }

  /** Puts the current run's progress back into nextSeq, before anything else reads or sets it. */
  private endRun(): void {
    if (this.runThread >= 0) this.nextSeq.set(this.runThread, this.runNext);
    this.runThread = -1;
  }

  /** The latest progress of every thread: a list, or a sequence point as read (kept undecoded). */
  progress(threads: readonly ThreadProgress[] | SequencePoint): void {
    this.lastProgress = threads instanceof SequencePoint ? threads.keep() : threads;
  }

  /** At the end of the stream, attempts after a thread's last event that never arrived were dropped too. */
  finish(): void {
    this.endRun();
    const last = this.lastProgress;
    for (const t of last instanceof SequencePoint ? last.threads() : last) {
      const expected = this.nextSeq.get(t.threadId) ?? 0;
      if (t.nextSeq > expected) {
        this.gap(t.threadId, expected, t.nextSeq - 1);
        this.nextSeq.set(t.threadId, t.nextSeq);
      }
    }
  }

  private gap(threadId: number, fromSeq: number, toSeq: number): void {
    const count = toSeq - fromSeq + 1;
    this.onGap?.({ threadId, fromSeq, toSeq, count });
    this.dropped += count;
    this.droppedByThread.set(threadId, (this.droppedByThread.get(threadId) ?? 0) + count);
    const last = this.ranges[this.ranges.length - 1];
    if (last && last.threadId === threadId && last.toSeq + 1 === fromSeq) {
      this.ranges[this.ranges.length - 1] = { threadId, fromSeq: last.fromSeq, toSeq, count: last.count + count };
    } else if (this.ranges.length < this.maxRanges) this.ranges.push({ threadId, fromSeq, toSeq, count });
    else this.rangesOmitted++;
  }
}
