import { codeGenerationAllowed } from './code-generation.js';
import { type ArgsOf, type EnabledFlag, EventType, type MemberHeader, type TraceEventType } from './event-type.js';
import type { FieldSpec, FieldType } from './field-type.js';
import type { EventSpec } from './provider.js';
import { endWhenSettled } from './promise-settlement.js';
import { currentSpanId, nextSpanId, runInSpan } from './span-context.js';
import { SPAN_BEGIN_FIELDS, SPAN_BEGIN_SUFFIX, SPAN_END_FIELDS, SPAN_END_SUFFIX } from './type-role.js';
import { requireBuiltin } from './this-thread.js';

const { isPromise } = requireBuiltin('node:util/types') as typeof import('node:util/types');

/** An event's spec (its `fields` go with the begin event) and the end event's fields. */
export interface SpanSpec<KW extends string = string> extends EventSpec<KW> {
  /** Written with the end event (`end(token, ...)`; zero values when `run` ends the span). */
  readonly endFields?: readonly FieldSpec[];
}

/** One declared span: a begin and an end event sharing a span id, with the parent span's id. */
export interface TraceSpanType<F = readonly FieldSpec[], EF = readonly FieldSpec[]> {
  readonly provider: string;
  readonly name: string;
  readonly id: number;
  /** True when at least one session listens; a plain property, recomputed only when sessions change. */
  readonly enabled: boolean;
  readonly beginType: TraceEventType;
  readonly endType: TraceEventType;
  /** Writes the begin event (parent: the current span) and returns the span's token; 0, allocating nothing, when disabled. */
  begin(...args: ArgsOf<F>): number;
  /** Writes the end event of the span `begin` returned (nothing for token 0). */
  end(token: number, ...args: ArgsOf<EF>): void;
  /** Writes an error end for the span `begin` returned: field `error` true, the error's name, end fields zero. */
  fail(token: number, error: unknown): void;
  /**
   * Runs `fn` inside a new span, current for everything `fn` does (across await, timers, callbacks),
   * and returns exactly what `fn` returned, enabled or not. The span ends when `fn` returns, or when
   * the native Promise it returned settles, as an error end (field `error` and the error's name) when
   * it throws or rejects; the error goes on, and a rejection nobody handles stays unhandled. A
   * thenable that is not a native Promise (a query builder) is returned untouched and the span ends
   * when `fn` returns. Disabled: calls `fn`.
   */
  run<R>(fn: () => R, ...args: ArgsOf<F>): R;
}

const EMPTY_BYTES = new Uint8Array(0);

/** The value `run` writes for an end field it has no value for. */
function zeroValue(type: FieldType): unknown {
  switch (type) {
    case 'bool': return false;
    case 'string': return '';
    case 'bytes': return EMPTY_BYTES;
    default: return 0;
  }
}

/** The name an error end records: the error's `name`, or the thrown value's type. */
function errorName(e: unknown): string {
  if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
    try {
      const name = (e as { name?: unknown }).name;
      if (typeof name === 'string') return name;
    } catch {
      // A getter that throws: fall back to the type.
    }
  }
  return e === null ? 'null' : typeof e;
}

/**
 * `run` once `fn` is known to run inside span `id`. It returns exactly what `fn` returned, and touches
 * it only to end the span: a throw ends it as an error end; a native promise ends it when it settles,
 * watched without a reaction (src/schema/promise-settlement.ts); anything else ends it now, a thenable
 * included, whose `then` is neither read nor called (a query builder runs when it is awaited, not
 * before, and keeps its methods).
 */
function runSpan(span: SpanType, id: number, fn: () => unknown): unknown {
  // Under a sampled-out request: fn runs where it was called, so what it begins is left out too.
  if (id === 0) return fn();
  let r: unknown;
  try {
    r = runInSpan(id, fn);
  } catch (e) {
    span.fail(id, e);
    throw e;
  }
  if (isPromise(r)) endWhenSettled(r as Promise<unknown>, span, id);
  else span.finish(id, '');
  return r;
}

/** A span's front-end functions; `finish` is `run`'s normal end (zero end fields, `note` in errorName). */
interface SpanMethods {
  begin: (...args: any[]) => number;
  end: (token: number, ...args: any[]) => void;
  run: (fn: () => unknown, ...args: any[]) => unknown;
  finish: (id: number, note: string) => void;
  fail: (token: number, error: unknown) => void;
}

/**
 * A span's begin/end/run, generated per span with positional arguments as event writers are, so no
 * call allocates. They check `enabled` on the object they are called on (the span, or the object of
 * another copy of tracepipe or of tracepipe/lite that the host keeps in step with it; docs/LITE.md),
 * which is the one property load a disabled call costs, and write through the span's event types.
 */
function generateSpanMethods(span: SpanType, fields: readonly FieldSpec[], endFields: readonly FieldSpec[]): SpanMethods {
  const a = fields.map((_, i) => `a${i}`).join(', ');
  const b = endFields.map((_, i) => `b${i}`).join(', ');
  const zeros = endFields.map((_, i) => `Z[${i}]`).join(', ');
  const src = `
const beginType = span.beginType, endType = span.endType;
function open(${a}) {
  const parent = currentSpanId();
  if (parent < 0) return 0;
  const id = nextSpanId();
  beginType.write(id, parent${a ? `, ${a}` : ''});
  return id;
}
return {
  begin: function begin(${a}) {
    return this.enabled ? open(${a}) : 0;
  },
  end: function end(t${b ? `, ${b}` : ''}) {
    if (t !== 0 && this.enabled) endType.write(t, false, ''${b ? `, ${b}` : ''});
  },
  fail: function fail(t, e) {
    if (t !== 0 && this.enabled) endType.write(t, true, errorName(e)${zeros ? `, ${zeros}` : ''});
  },
  run: function run(fn${a ? `, ${a}` : ''}) {
    return this.enabled ? runSpan(span, open(${a}), fn) : fn();
  },
  finish: function finish(id, note) {
    endType.write(id, false, note${zeros ? `, ${zeros}` : ''});
  },
};`;
  return new Function('span', 'nextSpanId', 'currentSpanId', 'runSpan', 'errorName', 'Z', src)(span, nextSpanId, currentSpanId, runSpan, errorName, endFields.map(([, t]) => zeroValue(t))) as SpanMethods;
}

/**
 * The same functions as closures, for a process that may not compile code from strings
 * (code-generation.ts): they take their fields from `arguments` and pass exactly as many on, so the
 * events written are the same; each call builds its argument list.
 */
function closureSpanMethods(span: SpanType, fields: readonly FieldSpec[], endFields: readonly FieldSpec[]): SpanMethods {
  const { beginType, endType } = span;
  const zeros = endFields.map(([, t]) => zeroValue(t));
  /** `count` arguments of `args` from `from` on, after `head`. */
  const callWith = (head: unknown[], args: ArrayLike<unknown>, from: number, count: number): unknown[] => {
    for (let k = 0; k < count; k++) head.push(args[from + k]);
    return head;
  };
  const open = (args: ArrayLike<unknown>, from: number): number => {
    const parent = currentSpanId();
    if (parent < 0) return 0;
    const id = nextSpanId();
    Reflect.apply(beginType.write, beginType, callWith([id, parent], args, from, fields.length));
    return id;
  };
  return {
    begin: function begin(this: EnabledFlag) {
      return this.enabled ? open(arguments, 0) : 0;
    },
    end: function end(this: EnabledFlag, t: number) {
      if (t !== 0 && this.enabled) Reflect.apply(endType.write, endType, callWith([t, false, ''], arguments, 1, endFields.length));
    },
    fail: function fail(this: EnabledFlag, t: number, e: unknown) {
      if (t !== 0 && this.enabled) endType.write(t, true, errorName(e), ...zeros);
    },
    run: function run(this: EnabledFlag, fn: () => unknown) {
      return this.enabled ? runSpan(span, open(arguments, 1), fn) : fn();
    },
    finish: (id: number, note: string) => endType.write(id, false, note, ...zeros),
  };
}

/** The methods another object calls as a span's own (tracepipe-host.ts links them). */
export type SpanMethodMirror = Pick<SpanMethods, 'begin' | 'end' | 'fail' | 'run'>;

export class SpanType implements TraceSpanType {
  /** Follows the begin event's flag (the end event has the same level and keywords, so the same sessions). */
  enabled = false;
  readonly beginType: EventType;
  readonly endType: EventType;
  // Until one of them is first called, stand-ins that make the generated methods (see `methods()`).
  begin: (...args: any[]) => number;
  end: (token: number, ...args: any[]) => void;
  run: <R>(fn: () => R, ...args: any[]) => R;
  /** @internal `run`'s normal end: the end fields are zero, `note` goes in errorName (src/schema/promise-settlement.ts). */
  finish: (id: number, note: string) => void;
  fail: (token: number, error: unknown) => void;
  #made = false;
  readonly #fields: readonly FieldSpec[];
  readonly #endFields: readonly FieldSpec[];
  readonly #methodMirrors: SpanMethodMirror[] = [];

  readonly provider: string;
  readonly name: string;
  readonly id: number;

  constructor(h: MemberHeader, fields: readonly FieldSpec[], endFields: readonly FieldSpec[], allocateTypeIndex: () => number) {
    const { provider, name, id, version, level, keywords } = h;
    this.provider = provider;
    this.name = name;
    this.id = id;
    this.beginType = new EventType(provider, name + SPAN_BEGIN_SUFFIX, id, version, level, keywords, [...SPAN_BEGIN_FIELDS, ...fields], allocateTypeIndex());
    this.endType = new EventType(provider, name + SPAN_END_SUFFIX, id, version, level, keywords, [...SPAN_END_FIELDS, ...endFields], allocateTypeIndex());
    this.#fields = fields;
    this.#endFields = endFields;
    const span = this;
    this.begin = function begin(this: unknown, ...args: unknown[]) {
      return Reflect.apply(span.methods().begin, this, args) as number;
    };
    this.end = function end(this: unknown, ...args: unknown[]) {
      Reflect.apply(span.methods().end, this, args);
    };
    this.run = function run(this: unknown, ...args: unknown[]) {
      return Reflect.apply(span.methods().run, this, args);
    } as <R>(fn: () => R, ...args: any[]) => R;
    this.finish = (id, note) => this.methods().finish(id, note);
    this.fail = function fail(this: unknown, ...args: unknown[]) {
      Reflect.apply(span.methods().fail, this, args);
    };
    this.beginType.addMirror(this);
  }

  /**
   * Generates the span's methods on the first call of any of them: a process defines far more spans
   * (every built-in provider's) than it ever begins, and compiling each one's code as it is defined
   * would be a good part of what `import 'tracepipe'` costs.
   */
  methods(): this {
    if (this.#made) return this;
    this.#made = true;
    const m = (codeGenerationAllowed ? generateSpanMethods : closureSpanMethods)(this, this.#fields, this.#endFields);
    this.begin = m.begin;
    this.end = m.end;
    this.run = m.run as <R>(fn: () => R, ...args: any[]) => R;
    this.finish = m.finish;
    this.fail = m.fail;
    for (const mirror of this.#methodMirrors) this.bindMethods(mirror);
    return this;
  }

  /** `m`'s begin, end, fail and run are this span's, now and once they are generated. */
  addMethodMirror(m: SpanMethodMirror): void {
    this.#methodMirrors.push(m);
    this.bindMethods(m);
  }

  private bindMethods(m: SpanMethodMirror): void {
    m.begin = this.begin;
    m.end = this.end;
    m.fail = this.fail;
    m.run = this.run;
  }
}
