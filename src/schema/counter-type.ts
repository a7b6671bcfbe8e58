import { EventType, type TraceEventType } from './event-type.js';
import type { Level } from './level.js';
import { COUNTER_SUFFIX } from './type-role.js';

export interface CounterSpec<KW extends string = string> {
  readonly id: number;
  readonly version?: number;
  readonly level?: Level;
  readonly keywords?: readonly KW[];
  /** What the value counts ('requests', 'bytes'); it names the value field in the trace. Default 'value'. */
  readonly unit?: string;
  readonly doc?: string;
}

/** One declared counter: each change is an event carrying the counter's value after it. */
export interface TraceCounterType {
  readonly provider: string;
  readonly name: string;
  readonly id: number;
  readonly unit: string;
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

  constructor(
    readonly provider: string,
    readonly name: string,
    readonly id: number,
    version: number,
    level: Level,
    keywords: bigint,
    readonly unit: string,
    typeIndex: number,
  ) {
    const type = new EventType(provider, name + COUNTER_SUFFIX, id, version, level, keywords, [[unit, 'f64']], typeIndex);
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
