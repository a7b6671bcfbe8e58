import { type FieldSpec, type FieldType, type FieldValue } from './field-type.js';
import { type Level } from './level.js';
import { computePayloadLayout, type PayloadLayout } from './payload-layout.js';
import type { RecordTarget } from './record-abi.js';
import { closureWriter } from './closure-writer.js';
import { codeGenerationAllowed } from './code-generation.js';
import { type Clock, generateWriter, type WriteFn, type WriterHost } from './event-writer.js';
import type { InvalidArgument } from './writer-arguments.js';

export type ArgsOf<F> = F extends readonly FieldSpec[]
  ? { -readonly [K in keyof F]: F[K] extends readonly [string, infer T extends FieldType] ? FieldValue<T> : never }
  : [];

/** What every member of a provider (event, span, counter) is declared with. */
export interface MemberHeader {
  readonly provider: string;
  readonly name: string;
  readonly id: number;
  readonly version: number;
  readonly level: Level;
  readonly keywords: bigint;
}

/** Everything a reader needs to decode an event type: it travels in the trace as metadata. */
export interface EventDescriptor extends MemberHeader {
  readonly fields: readonly FieldSpec[];
}

/** One declared event: its descriptor, its enabled flag and its generated writers. */
export interface TraceEventType<F = readonly FieldSpec[]> extends EventDescriptor {
  /** True when at least one session listens; recomputed only when sessions change. */
  readonly enabled: boolean;
  /** Positional, in field order; timestamped now. */
  write(...args: ArgsOf<F>): void;
  /** Same, with an explicit timestamp on this thread's performance.now() clock (for events observed late). */
  writeAt(timestampMs: number, ...args: ArgsOf<F>): void;
}

/** Anything with an enabled flag someone else keeps current. */
export interface EnabledFlag {
  enabled: boolean;
}

/** Something that calls an event type's writers as its own. */
export interface WriterMirror {
  write: EventType['write'];
  writeAt: EventType['writeAt'];
}

/** An event type's first write or writeAt: makes its writers, then writes with them. */
function firstWrite(this: EventType, ...args: unknown[]): void {
  Reflect.apply(this.writers().write, this, args);
}
function firstWriteAt(this: EventType, ...args: unknown[]): void {
  Reflect.apply(this.writers().writeAt, this, args);
}

/**
 * Writes (write and writeAt together) an event type makes with its closure writers before it
 * generates its own. Generating the two takes 0.2–0.7 ms (BENCHMARKS.md §39), which an event type
 * written a few times (a rundown, a session's lifecycle, a warning) never earns back, and which a
 * short program paid in its first milliseconds.
 */
const WRITES_BEFORE_GENERATING = 256;

export class EventType implements TraceEventType {
  enabled = false;
  /** Per-session targets on this thread that currently want this event. */
  _targets: RecordTarget[] = [];
  /** Until first called, a stand-in that makes the writers (see `writers()`). */
  write: (...args: any[]) => void = firstWrite;
  writeAt: (timestampMs: number, ...args: any[]) => void = firstWriteAt;
  #made = false;
  /** The begin type of a span that records all this event says: a session that records it gets no event (EventSpec.replacedBy). */
  replacedBy: EventType | undefined = undefined;
  /** Objects that call this type's writers as their own (tracepipe-host.ts): bound to the writers once made. */
  readonly #writerMirrors: WriterMirror[] = [];

  constructor(
    readonly provider: string,
    readonly name: string,
    readonly id: number,
    readonly version: number,
    readonly level: Level,
    readonly keywords: bigint,
    readonly fields: readonly FieldSpec[],
    /** Thread-local index written in each record; 0 is reserved for metadata records. */
    readonly typeIndex: number,
  ) {}

  #layout: PayloadLayout | undefined;

  /** Computed when first needed (a writer, a session's metadata, a reader), not for every type defined. */
  get layout(): PayloadLayout {
    return (this.#layout ??= computePayloadLayout(this.fields));
  }

  /**
   * Makes the writers on the first write, not for every type defined: a process defines far more
   * event types (every built-in provider's) than it ever writes, and a session enables more than it
   * writes (a provider's warnings, its stall events). The first WRITES_BEFORE_GENERATING writes go
   * through the closure writers; the generated ones replace them after that.
   */
  writers(): this {
    if (this.#made) return this;
    this.#made = true;
    // The clock as it is at the first write, for good: an application may swap the global
    // `performance` for a while (fake timers), and the writers generated later keep this one.
    const clock = performance;
    const write = this.closure(clock, false, 'write');
    const writeAt = this.closure(clock, true, 'writeAt');
    if (!codeGenerationAllowed) return this.install(write, writeAt);
    let left = WRITES_BEFORE_GENERATING;
    const countDown = (): void => {
      if (--left === 0) this.install(this.generated(clock, false, 'write') ?? write, this.generated(clock, true, 'writeAt') ?? writeAt);
    };
    const counted = (fn: WriteFn): WriteFn =>
      function (this: WriterHost) {
        countDown();
        Reflect.apply(fn, this, arguments);
      };
    return this.install(counted(write), counted(writeAt));
  }

  private onInvalid(method: 'write' | 'writeAt'): InvalidArgument {
    return (k, v) => this.warnInvalid(method, k, v);
  }

  private closure(clock: Clock, withTimestamp: boolean, method: 'write' | 'writeAt'): WriteFn {
    return closureWriter(this.layout, this.typeIndex, clock, withTimestamp, this.onInvalid(method));
  }

  /** Undefined when code generation fails now, inside the application's call (a replaced Function, a policy set since). */
  private generated(clock: Clock, withTimestamp: boolean, method: 'write' | 'writeAt'): WriteFn | undefined {
    try {
      return generateWriter(this.layout, this.typeIndex, clock, withTimestamp, this.onInvalid(method));
    } catch {
      return undefined;
    }
  }

  private install(write: WriteFn, writeAt: WriteFn): this {
    this.write = write;
    this.writeAt = writeAt;
    for (const m of this.#writerMirrors) this.bindWriters(m);
    return this;
  }

  /** `m.write` and `m.writeAt` write as this type's, now and once the writers are made. */
  addWriterMirror(m: WriterMirror): void {
    this.#writerMirrors.push(m);
    this.bindWriters(m);
  }

  private bindWriters(m: WriterMirror): void {
    // The generated writers read their targets from `this`: bound, they write this type's.
    m.write = this.write.bind(this);
    m.writeAt = this.writeAt.bind(this);
  }

  private warned = false;

  /** Once per event type: a wrong argument is a bug in the caller, worth one line, not one per event. */
  private warnInvalid(method: string, field: number, value: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const what = field < 0 ? 'the timestamp (a finite number of ms)' : `field '${this.fields[field]![0]}' (${this.fields[field]![1]})`;
    const got = value === null ? 'null' : typeof value === 'number' ? String(value) : typeof value;
    process.emitWarning(`tracepipe: ${this.provider}/${this.name}.${method}() got ${got} for ${what}; such events are dropped and counted (reason invalid-argument)`);
  }

  /**
   * Objects whose `enabled` follows this type's: a span's or counter's front end, and the objects
   * other copies of tracepipe and tracepipe/lite hand to this thread's host (docs/LITE.md).
   */
  private readonly mirrors: EnabledFlag[] = [];

  addMirror(m: EnabledFlag): void {
    this.mirrors.push(m);
    m.enabled = this.enabled;
  }

  setTargets(targets: RecordTarget[]): void {
    this._targets = targets;
    const on = targets.length > 0;
    this.enabled = on;
    for (const m of this.mirrors) m.enabled = on;
  }
}
