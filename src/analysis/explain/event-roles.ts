import type { StreamEventType } from '../../format/trace-event.js';
import { typeRole } from '../../schema/type-role.js';
import { isGcPauseType, isStallEndType, isStallStartType } from '../runtime-intervals.js';

/** What an event contributes to explain: a span's begin or end ("Provider/Span"), a GC pause, a stall's start or end, a CPU sampler event. */
export type EventRole =
  | { readonly kind: 'span-begin' | 'span-end'; readonly span: string }
  | { readonly kind: 'gc-pause' | 'stall-start' | 'stall-end' | 'sampler' }
  | null;

const CPU_SAMPLER = 'Runtime.CpuSampler';

/** Each stream type's role, worked out once per type. */
export class EventRoles {
  private readonly roles = new Map<StreamEventType, EventRole>();

  of(t: StreamEventType): EventRole {
    let r = this.roles.get(t);
    if (r === undefined) this.roles.set(t, (r = roleOf(t)));
    return r;
  }
}

function roleOf(t: StreamEventType): EventRole {
  if (isGcPauseType(t)) return { kind: 'gc-pause' };
  if (isStallStartType(t)) return { kind: 'stall-start' };
  if (isStallEndType(t)) return { kind: 'stall-end' };
  if (t.descriptor.provider === CPU_SAMPLER) return { kind: 'sampler' };
  const role = typeRole(t.descriptor);
  if (!role || role.kind === 'counter') return null;
  return { kind: role.kind, span: `${t.descriptor.provider}/${role.span}` };
}
