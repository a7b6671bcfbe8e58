import type { BlockEvent, RawPayload } from '../../format/events-block.js';
import type { StreamEventType, TraceEvent } from '../../format/trace-event.js';
import { type RawFieldReader, RawPayloads } from '../../format/raw-payloads.js';
import { typeRole } from '../../schema/type-role.js';
import { isGcPauseType, isStallEndType, isStallStartType } from '../../format/timeline-role.js';

/**
 * What an event contributes to explain, and how to read what it needs from its payload: a span's
 * begin or end ("Provider/Span", its ids), a GC pause, a stall's start or end, a CPU sample (its
 * sampled thread), another CPU sampler event (decoded whole).
 */
export type EventRole =
  | { readonly kind: 'span-begin'; readonly span: string; readonly spanId: RawFieldReader; readonly parentSpanId: RawFieldReader }
  | { readonly kind: 'span-end'; readonly span: string; readonly spanId: RawFieldReader; readonly error: RawFieldReader }
  | { readonly kind: 'sample'; readonly thread: RawFieldReader }
  | { readonly kind: 'gc-pause' | 'stall-start' | 'stall-end' | 'sampler' }
  | null;

const CPU_SAMPLER = 'Runtime.CpuSampler';

/** Each stream type's role, worked out once per type; `raw` reads the payloads. */
export class EventRoles {
  readonly raw = new RawPayloads();
  private readonly roles = new Map<StreamEventType, EventRole>();

  /** The event with its fields, for the few that need them all. */
  decoded(e: BlockEvent, raw: RawPayload): TraceEvent {
    return { provider: e.provider, name: e.name, id: e.id, version: e.version, level: e.level, timestampNs: e.timestampNs, threadId: e.threadId, sequence: e.sequence, fields: this.raw.decode(e.type, raw) };
  }

  of(t: StreamEventType): EventRole {
    let r = this.roles.get(t);
    if (r === undefined) this.roles.set(t, (r = this.roleOf(t)));
    return r;
  }

  private roleOf(t: StreamEventType): EventRole {
    if (isGcPauseType(t)) return { kind: 'gc-pause' };
    if (isStallStartType(t)) return { kind: 'stall-start' };
    if (isStallEndType(t)) return { kind: 'stall-end' };
    if (t.descriptor.provider === CPU_SAMPLER) {
      const thread = t.descriptor.name === 'Sample' ? this.raw.numberField(t, 'thread') : undefined;
      return thread ? { kind: 'sample', thread } : { kind: 'sampler' };
    }
    // Span types are known by their leading fields (typeRole), so the ids are where they are read.
    const role = typeRole(t.descriptor);
    if (!role || role.kind === 'counter') return null;
    const span = `${t.descriptor.provider}/${role.span}`;
    const spanId = this.raw.numberField(t, 'spanId')!;
    return role.kind === 'span-begin' ? { kind: role.kind, span, spanId, parentSpanId: this.raw.numberField(t, 'parentSpanId')! } : { kind: role.kind, span, spanId, error: this.raw.numberField(t, 'error')! };
  }
}
