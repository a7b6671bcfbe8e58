import type { EventDescriptor } from '../schema/event-type.js';
import type { Level } from '../schema/level.js';
import type { PayloadLayout } from '../schema/payload-layout.js';
import type { DecodedFields, PayloadDecoder } from './payload-codec.js';

/** One event as read back from a trace. */
export interface TraceEvent {
  readonly provider: string;
  readonly name: string;
  readonly id: number;
  readonly version: number;
  readonly level: Level;
  /** Nanoseconds since the trace origin (header.clock), on the process monotonic clock shared by all threads. */
  readonly timestampNs: number;
  readonly threadId: number;
  /** Per-thread (per session) attempt number; a gap means dropped events. */
  readonly sequence: number;
  readonly fields: DecodedFields;
}

/** A type as the stream declared it, ready to decode payloads. */
export interface StreamEventType {
  readonly typeId: number;
  readonly descriptor: EventDescriptor;
  readonly layout: PayloadLayout;
  readonly decode: PayloadDecoder;
  /** "Provider/Event". */
  readonly key: string;
}
