import { EventType, type MemberHeader, type TraceEventType } from './event-type.js';
import type { EventSpec } from './provider.js';
import { COUNTER_SUFFIX } from './type-role.js';

/** An event's spec without fields: a counter has one, its value. */
export interface CounterSpec<KW extends string = string> extends Omit<EventSpec<KW>, 'fields'> {
  /** What the value counts ('requests', 'bytes'); it names the value field in the trace. Default 'value'. */
  readonly unit?: string;
}

/** One declared counter: each change is an event carrying the counter's value after it. */
export interface TraceCounterType {
  readonly provider: string;
  readonly name: string;
  readonly id: number;
  readonly unit: string;
  /** The spec's `doc`, or ''. */
  readonly description: string;
  /** True when at least one session listens; a plain property. */
  readonly enabled: boolean;
  readonly type: TraceEventType;
  /** Sets the value and records it. */
  set(value: number): void;
  /** Adds `delta` (negative to decrease) and records the new value. */
  add(delta: number): void;
}

/**
 * The value is kept whether or not a session listens, so a session that starts later records the
 * true value from the first change on. Counters are per thread, as events are: each thread that
 * changes a counter has its own value. set/add are closures over the counter (no `this`), so the
 * same functions serve other copies' and tracepipe/lite's counter objects (docs/LITE.md).
 */
export class CounterType implements TraceCounterType {
  enabled = false;
  value = 0;
  readonly type: EventType;
  readonly set: (value: number) => void;
  readonly add: (delta: number) => void;

  readonly provider: string;
  readonly name: string;
  readonly id: number;

  constructor(
    h: MemberHeader,
    readonly unit: string,
    typeIndex: number,
    readonly description = '',
  ) {
    this.provider = h.provider;
    this.name = h.name;
    this.id = h.id;
    const type = new EventType(h.provider, h.name + COUNTER_SUFFIX, h.id, h.version, h.level, h.keywords, [[unit, 'f64']], typeIndex);
    this.type = type;
    // A value that is not a number goes to the writer anyway when enabled: it refuses it and counts
    // the attempt as dropped (invalid-argument), as it would for write().
    this.set = (value) => {
      if (typeof value === 'number') this.value = value;
      if (this.enabled) type.write(value);
    };
    this.add = (delta) => {
      if (typeof delta !== 'number') {
        if (this.enabled) type.write(delta);
        return;
      }
      const v = (this.value += delta);
      if (this.enabled) type.write(v);
    };
    type.addMirror(this);
  }
}
