import type { TraceEvent } from '../format/trace-event.js';
import { msToNs } from '../schema/milliseconds.js';

/**
 * GC pauses and event-loop stalls as intervals of the thread they stopped: the one reading of
 * Runtime.GC and Runtime.EventLoop that the timelines, the report's charts and explain share.
 */
export interface RuntimeInterval {
  /** The thread that was stopped (the watchdog writes the main thread's pauses and stalls). */
  readonly threadId: number;
  readonly startNs: number;
  readonly durationNs: number;
}

export interface GcPause extends RuntimeInterval {
  readonly kind: string;
}

/** The thread a runtime event is about: its `thread` field, else the thread that wrote it. */
export function subjectThread(e: TraceEvent): number {
  return typeof e.fields.thread === 'number' ? e.fields.thread : e.threadId;
}

/** A GC pause: its true start (the event's timestamp), its exact duration, its kind. */
export function gcPauseOf(e: TraceEvent): GcPause {
  return { threadId: subjectThread(e), startNs: e.timestampNs, durationNs: Number(e.fields.durationNs), kind: String(e.fields.kind) };
}


/**
 * Pairs StallStart and StallEnd per stalled thread. A stall runs from the last heartbeat before it
 * (StallStart's time minus blockedMs) for durationMs, the gap between the heartbeats around it.
 */
export class StallPairs {
  private readonly open = new Map<number, TraceEvent>();

  start(e: TraceEvent): void {
    this.open.set(subjectThread(e), e);
  }

  /** The stall `e` ends, with the StallStart it pairs with (none when the start was not in the trace). */
  end(e: TraceEvent): RuntimeInterval & { readonly start: TraceEvent | undefined } {
    const threadId = subjectThread(e);
    const start = this.open.get(threadId);
    this.open.delete(threadId);
    const durationNs = msToNs(Number(e.fields.durationMs));
    const startNs = start ? start.timestampNs - msToNs(Number(start.fields.blockedMs)) : e.timestampNs - durationNs;
    return { threadId, startNs, durationNs, start };
  }

  /** Stalls still going when the trace ended: their thread, start, and StallStart. */
  unfinished(): { readonly threadId: number; readonly startNs: number; readonly start: TraceEvent }[] {
    return [...this.open].map(([threadId, start]) => ({ threadId, startNs: start.timestampNs - msToNs(Number(start.fields.blockedMs)), start }));
  }
}
