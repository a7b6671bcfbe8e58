import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { FieldType } from '../schema/field-type.js';
import { exactMs } from '../schema/milliseconds.js';
import { gcPauseOf, StallPairs } from '../analysis/runtime-intervals.js';
import { typeHasFields } from '../format/timeline-role.js';

type FieldValue = DecodedFields[string];

/** A slice's argument: name, type and value (a field that is not the name, the time or the thread). */
export type SliceArg = readonly [string, FieldType, FieldValue];

/** A span of time on a thread: a GC pause, an event-loop stall, a span. */
export interface Slice {
  readonly threadId: number;
  readonly startNs: number;
  /** Undefined for a stall still going when the trace ended. */
  readonly durationNs: number | undefined;
  readonly name: string;
  readonly category: string;
  readonly args: readonly SliceArg[];
}

/** A GC pause: its true start (the event's timestamp), its exact duration, its kind as the name. */
export function gcPauseSlice(e: BlockEvent): Slice {
  const args: SliceArg[] = [];
  for (const f of e.type.layout.fields) if (f.name !== 'kind' && f.name !== 'thread') args.push([f.name, f.type, e.fields[f.name]!]);
  const p = gcPauseOf(e);
  return { threadId: p.threadId, startNs: p.startNs, durationNs: p.durationNs, name: p.kind, category: e.provider, args };
}

/** Stalls as slices: StallStart and StallEnd paired per stalled thread (StallPairs). */
export class StallSlices {
  private readonly pairs = new StallPairs();

  start(e: BlockEvent): void {
    this.pairs.start(e);
  }

  end(e: BlockEvent): Slice {
    const { threadId, startNs, durationNs } = this.pairs.end(e);
    return { threadId, startNs, durationNs, name: 'stall', category: e.provider, args: [['durationMs', 'f64', durationNs / 1e6]] };
  }

  /** Stalls still going when the trace ended. */
  unfinished(): Slice[] {
    return this.pairs.unfinished().map(({ threadId, startNs, start }) => ({
      threadId,
      startNs,
      durationNs: undefined,
      name: 'stall',
      category: start.provider,
      args: [['blockedMs', 'f64', exactMs(Number(start.fields.blockedMs))]],
    }));
  }
}

/**
 * Thread names: 'main' and 'worker N' until the process rundown (`Runtime.Process/Thread`) names a
 * thread and its role; tracepipe's own drain and watchdog threads are marked as such. Timeline tools
 * want OS-like thread ids: the main thread gets the pid, worker N gets pid + N (never a clash).
 */
export class ThreadNames {
  private readonly names = new Map<number, string>();

  constructor(private readonly pid: number) {}

  tid(threadId: number): number {
    return this.pid + threadId;
  }

  has(threadId: number): boolean {
    return this.names.has(threadId);
  }

  name(threadId: number): string {
    let n = this.names.get(threadId);
    if (n === undefined) {
      n = threadId === 0 ? 'main' : `worker ${threadId}`;
      this.names.set(threadId, n);
    }
    return n;
  }

  /** From a Runtime.Process/Thread event: the thread it renamed, if its name changed. */
  observe(e: BlockEvent): number | undefined {
    const { threadId, name, role } = e.fields;
    if (typeof threadId !== 'number' || typeof role !== 'string') return undefined;
    const label = threadLabel(threadId, typeof name === 'string' ? name : '', role);
    if (this.names.get(threadId) === label) return undefined;
    this.names.set(threadId, label);
    return threadId;
  }
}

function threadLabel(threadId: number, name: string, role: string): string {
  if (role === 'main' || threadId === 0) return 'main';
  const worker = `worker ${threadId}`;
  if (role === 'tracepipe-drain') return `tracepipe drain (${worker})`;
  if (role === 'tracepipe-watchdog') return `tracepipe watchdog (${worker})`;
  return name ? `${name} (${worker})` : worker;
}

/** Whether `e` is the rundown's description of a thread. */
export function isThreadInfo(t: StreamEventType): boolean {
  return t.key === 'Runtime.Process/Thread' && typeHasFields(t, { threadId: ['u32'], role: ['string'] });
}
