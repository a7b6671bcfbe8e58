import type { BlockEvent } from './events-block.js';
import type { StreamEventType } from './trace-event.js';
import type { FieldType } from '../schema/field-type.js';
import type { FieldLayout } from '../schema/payload-layout.js';
import { COUNTER_SUFFIX, typeRole } from '../schema/type-role.js';

/** Whether `t` has each named field with one of the given types. */
export function typeHasFields(t: StreamEventType, wanted: Record<string, readonly FieldType[]>): boolean {
  return Object.entries(wanted).every(([name, types]) => t.layout.fields.some((f) => f.name === name && types.includes(f.type)));
}

/** Types are recognised by the provider's documented fields; one that lacks them (another version) is not. */
export const isGcPauseType = (t: StreamEventType): boolean => t.key === 'Runtime.GC/GCPause' && typeHasFields(t, { durationNs: ['u64'], kind: ['string'] });
export const isStallStartType = (t: StreamEventType): boolean => t.key === 'Runtime.EventLoop/StallStart' && typeHasFields(t, { thread: ['u32'], blockedMs: ['f64'] });
export const isStallEndType = (t: StreamEventType): boolean => t.key === 'Runtime.EventLoop/StallEnd' && typeHasFields(t, { thread: ['u32'], durationMs: ['f64'] });

/**
 * How tracepipe's runtime events show on a timeline (Perfetto, Chrome's trace viewer): GC pauses and
 * event-loop stalls as slices, heap and loop figures as counters, thread names from the process
 * rundown; spans (span-slices.ts) as slices and counters as counters; the CPU sampler's frames,
 * stacks and samples as callstack samples where the format has them. Every other event is an instant
 * on the thread that wrote it.
 */
export type TimelineRole = 'gc-pause' | 'stall-start' | 'stall-end' | 'span-begin' | 'span-end' | 'counter' | 'cpu-sample' | 'instant';

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
