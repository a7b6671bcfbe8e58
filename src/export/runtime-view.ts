import { basename } from 'node:path';
import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { FieldType } from '../schema/field-type.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { exactMs } from '../schema/milliseconds.js';
import { COUNTER_SUFFIX, typeRole } from '../schema/type-role.js';
import { gcPauseOf, isGcPauseType, isStallEndType, isStallStartType, StallPairs, typeHasFields } from '../analysis/runtime-intervals.js';

/**
 * How tracepipe's runtime events show on a timeline (Perfetto, Chrome's trace viewer): GC pauses and
 * event-loop stalls as slices, heap and loop figures as counters, thread names from the process
 * rundown; spans (span-slices.ts) as slices and counters as counters; the CPU sampler's frames,
 * stacks and samples as callstack samples where the format has them. Every other event is an instant
 * on the thread that wrote it.
 */
export type TimelineRole = 'gc-pause' | 'stall-start' | 'stall-end' | 'span-begin' | 'span-end' | 'counter' | 'cpu-sample' | 'instant';

type FieldValue = DecodedFields[string];

const NUMBER: readonly FieldType[] = ['bool', 'u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64'];

/** Roles go by the provider's documented fields; a type that lacks them (another version) is an instant. */
export function timelineRole(t: StreamEventType): TimelineRole {
  switch (t.key) {
    case 'Runtime.GC/GCPause':
      return isGcPauseType(t) ? 'gc-pause' : 'instant';
    case 'Runtime.EventLoop/StallStart':
      return isStallStartType(t) ? 'stall-start' : 'instant';
    case 'Runtime.EventLoop/StallEnd':
      return isStallEndType(t) ? 'stall-end' : 'instant';
    case 'Runtime.CpuSampler/Frame':
      return typeHasFields(t, { frameId: ['u32'], functionName: ['string'], url: ['string'], line: ['u32'], column: ['u32'] }) ? 'cpu-sample' : 'instant';
    case 'Runtime.CpuSampler/Stack':
      return typeHasFields(t, { stackId: ['u32'], frameId: ['u32'], parentId: ['u32'] }) ? 'cpu-sample' : 'instant';
    case 'Runtime.CpuSampler/Sample':
      return typeHasFields(t, { stackId: ['u32'], thread: ['u32'] }) ? 'cpu-sample' : 'instant';
    case 'Runtime.GCHeap/HeapStats':
    case 'Runtime.GCHeap/HeapSpace':
    case 'Runtime.EventLoop/Delay':
      return counterFields(t).length > 0 ? 'counter' : 'instant';
    default:
      // Spans and counters a provider declared (type-role.ts): their types say what they are.
      return typeRole(t.descriptor)?.kind ?? 'instant';
  }
}

/** The fields a counter event contributes one series each (its numbers). */
export function counterFields(t: StreamEventType): readonly FieldLayout[] {
  return t.layout.fields.filter((f) => NUMBER.includes(f.type) && f.type !== 'bool');
}

/**
 * A counter event's series prefix: a declared counter's `Provider/Counter`; for the runtime's figures
 * the event name, and the heap space for per-space figures.
 */
export function counterGroup(e: BlockEvent): string {
  if (e.name.endsWith(COUNTER_SUFFIX)) return e.type.key.slice(0, -COUNTER_SUFFIX.length);
  const space = e.fields.space;
  return typeof space === 'string' ? `${e.name} ${space}` : e.name;
}

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

/** What a process is called on a timeline: its script and arguments (the full command line is in the metadata), or its title. */
export function processLabel(h: TraceHeader): string {
  const [, script, ...args] = h.argv;
  return script ? [basename(script), ...args].join(' ') : h.processTitle;
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
