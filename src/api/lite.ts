/**
 * tracepipe/lite: what a library needs to be traced, without depending on tracepipe. It imports
 * nothing. A library defines its providers here; they stay disabled (each check one property load)
 * until the application loads tracepipe, the host, which adopts them through a narrow versioned
 * interface on globalThis (docs/LITE.md), in either load order. The host then keeps every object's
 * `enabled` current and installs its writers, so checking never crosses the boundary and writing is
 * the host's own generated code.
 *
 * Importing nothing, it declares again the little it shares with tracepipe (Level, the field types,
 * the definition shape): those are part of the contract and change only by addition.
 */

/** Event verbosity, as in tracepipe: lower is more important. */
export const Level = {
  LogAlways: 0,
  Critical: 1,
  Error: 2,
  Warning: 3,
  Informational: 4,
  Verbose: 5,
} as const;
export type Level = (typeof Level)[keyof typeof Level];

export type FieldType = 'bool' | 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'u64' | 'i64' | 'f32' | 'f64' | 'string' | 'bytes';
export type FieldSpec = readonly [name: string, type: FieldType];
type FieldValue<T extends FieldType> = T extends 'bool' ? boolean : T extends 'u64' | 'i64' ? number | bigint : T extends 'string' ? string : T extends 'bytes' ? Uint8Array : number;
export type ArgsOf<F> = F extends readonly FieldSpec[] ? { -readonly [K in keyof F]: F[K] extends readonly [string, infer T extends FieldType] ? FieldValue<T> : never } : [];

interface MemberSpec<KW extends string> {
  readonly id: number;
  readonly version?: number;
  readonly level?: Level;
  readonly keywords?: readonly KW[];
  readonly doc?: string;
}
export interface EventSpec<KW extends string = string> extends MemberSpec<KW> {
  readonly fields?: readonly FieldSpec[];
  /** A span of the same provider that records all the event says: a session recording it gets no event. */
  readonly replacedBy?: string;
}
export interface SpanSpec<KW extends string = string> extends MemberSpec<KW> {
  readonly fields?: readonly FieldSpec[];
  readonly endFields?: readonly FieldSpec[];
}
export interface CounterSpec<KW extends string = string> extends MemberSpec<KW> {
  readonly unit?: string;
}

/** What onEnable/onDisable learn about the session that turned the provider on or off. */
export interface EnableContext {
  readonly sessionId: number;
  readonly keywords: bigint;
  readonly level: Level;
  readonly arguments: Readonly<Record<string, string>>;
}

export interface ProviderDefinition<K extends Record<string, bigint>, E, S = {}, C = {}> {
  readonly keywords?: K;
  readonly events?: E;
  readonly spans?: S;
  readonly counters?: C;
  readonly onEnable?: (ctx: EnableContext) => void;
  readonly onDisable?: (ctx: EnableContext) => void;
}

export interface LiteEvent<F = readonly FieldSpec[]> {
  readonly provider: string;
  readonly name: string;
  /** A field of this object, kept current by the host: false until a session wants the event. */
  readonly enabled: boolean;
  write(...args: ArgsOf<F>): void;
  writeAt(timestampMs: number, ...args: ArgsOf<F>): void;
}

export interface LiteSpan<F = readonly FieldSpec[], EF = readonly FieldSpec[]> {
  readonly provider: string;
  readonly name: string;
  readonly enabled: boolean;
  /** The span's token; 0 when disabled. */
  begin(...args: ArgsOf<F>): number;
  end(token: number, ...args: ArgsOf<EF>): void;
  /** An error end: field `error` true and the error's name. */
  fail(token: number, error: unknown): void;
  /** Runs `fn` inside the span (current across await); disabled, just calls `fn`. */
  run<R>(fn: () => R, ...args: ArgsOf<F>): R;
}

export interface LiteCounter {
  readonly provider: string;
  readonly name: string;
  readonly enabled: boolean;
  set(value: number): void;
  add(delta: number): void;
}

type FieldsOf<T, P extends string> = T extends { readonly [K in P]: infer F } ? F : readonly [];

export type LiteProvider<E, S = {}, C = {}> = { readonly name: string } & { readonly [N in keyof E]: LiteEvent<FieldsOf<E[N], 'fields'>> } & {
  readonly [N in keyof S]: LiteSpan<FieldsOf<S[N], 'fields'>, FieldsOf<S[N], 'endFields'>>;
} & { readonly [N in keyof C]: LiteCounter };

// ---- the interface to the host (docs/LITE.md): these keys and shapes are the contract ----

const HOST_KEY = Symbol.for('tracepipe.host');
const WAITING_KEY = Symbol.for('tracepipe.waiting');
/** The host interface version this file was written for. */
const ABI = 1;

interface Component {
  readonly abi: number;
  readonly name: string;
  readonly definition: unknown;
  readonly members: Record<string, object>;
  readonly provider: object;
}

let complained = false;

/** Once per copy of this file: a host it cannot use is worth one line, not one per provider. */
function complain(message: string): void {
  if (complained) return;
  complained = true;
  process.stderr.write(`tracepipe/lite: ${message}\n`);
}

function handOver(c: Component): void {
  const global = globalThis as Record<symbol, unknown>;
  const host = global[HOST_KEY] as { register?: unknown } | undefined;
  if (host === undefined) {
    // No host yet: it adopts what waits here when it loads.
    const waiting = (global[WAITING_KEY] ??= []) as Component[];
    waiting.push(c);
    return;
  }
  if (typeof host !== 'object' || host === null || typeof host.register !== 'function') {
    return complain(`globalThis[Symbol.for('tracepipe.host')] is not a tracepipe host; provider '${c.name}' and any later ones stay disabled`);
  }
  try {
    (host.register as (c: Component) => boolean)(c);
  } catch (e) {
    complain(`the tracepipe host failed on provider '${c.name}' (${(e as Error)?.message ?? String(e)}); it stays disabled`);
  }
}

// ---- the objects a library calls, disabled until a host takes them over ----

function ignore(): void {}
function noSpan(): number {
  return 0;
}
function callOnly<R>(fn: () => R): R {
  return fn();
}

class Member {
  enabled = false;
  constructor(
    readonly provider: string,
    readonly name: string,
  ) {}
}

class EventObject extends Member {
  write: (...args: unknown[]) => void = ignore;
  writeAt: (...args: unknown[]) => void = ignore;
}

class SpanObject extends Member {
  begin: (...args: unknown[]) => number = noSpan;
  end: (...args: unknown[]) => void = ignore;
  fail: (...args: unknown[]) => void = ignore;
  run: <R>(fn: () => R, ...args: unknown[]) => R = callOnly;
}

class CounterObject extends Member {
  /** Kept until a host takes over, which starts from it. */
  value = 0;
  set = (value: number): void => {
    if (typeof value === 'number') this.value = value;
  };
  add = (delta: number): void => {
    if (typeof delta === 'number') this.value += delta;
  };
}

// ---- definitions: checked here, so a mistake shows where it is made, host or not ----
// The same checks as tracepipe's defineProvider (src/schema/provider.ts), in the same order, with the
// same errors: the two accept exactly the same definitions (test/lite-definitions.test.mjs).

const FIELD_TYPES = new Set<unknown>(['bool', 'u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64', 'string', 'bytes']);
/** Member names a provider object has (in tracepipe or here), and '__proto__', which would set its prototype. */
const RESERVED = new Set(['name', 'keywordMap', 'events', 'spans', 'counters', 'isEnabled', 'enablements', 'definition', 'signature', 'onEnable', 'onDisable', 'onFlush', 'addMirror', '__proto__']);
/** What the trace format allows (tracepipe's schema/definition-limits.ts). */
const MAX_NAME_BYTES = 256;
const MAX_FIELDS_PER_EVENT = 1024;
/** What span and counter types are named with, and the fields every span event carries (tracepipe's schema/type-role.ts). */
const BEGIN = '.Begin';
const END = '.End';
const COUNTER = '.Counter';
const SPAN_BEGIN_FIELDS = ['spanId', 'parentSpanId'];
const SPAN_END_FIELDS = ['spanId', 'error', 'errorName'];
const utf8 = new TextEncoder();

function fail(message: string): never {
  throw new TypeError(`tracepipe: ${message}`);
}
function clash(message: string): never {
  throw new Error(`tracepipe: ${message}`);
}

function shown(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return typeof v;
  }
}

function checkNameLength(what: string, name: string, suffixes: readonly string[] = []): void {
  const bytes = utf8.encode(name).length;
  const limit = MAX_NAME_BYTES - Math.max(0, ...suffixes.map((x) => x.length));
  if (bytes > limit) fail(`${what} '${name.slice(0, 40)}…' is ${bytes} bytes of UTF-8; at most ${limit}${suffixes.length ? ` (its event types add ${suffixes.map((x) => `'${x}'`).join(' and ')})` : ''}`);
}

/** Defines a provider, as tracepipe's defineProvider does; its objects work, disabled, with no host at all. */
export function defineProvider<
  const K extends Record<string, bigint>,
  const E extends Record<string, EventSpec<Extract<keyof K, string>>> = {},
  const S extends Record<string, SpanSpec<Extract<keyof K, string>>> = {},
  const C extends Record<string, CounterSpec<Extract<keyof K, string>>> = {},
>(name: string, def: ProviderDefinition<K, E, S, C>): LiteProvider<E, S, C> {
  if (typeof name !== 'string' || !/^[A-Za-z_][\w.-]*$/.test(name)) fail(`provider name ${shown(name)} must start with a letter and use letters, digits, '.', '-' or '_'`);
  checkNameLength('provider name', name);
  if (typeof def !== 'object' || def === null) fail(`defineProvider('${name}', definition) needs a definition object`);
  const keywords: Record<string, unknown> = { ...(def.keywords ?? {}) };
  for (const [k, v] of Object.entries(keywords)) if (typeof v !== 'bigint' || v < 0n || v >= 1n << 64n) fail(`keyword '${k}' of '${name}' must be a 64-bit bigint mask`);
  const provider: Record<string, unknown> = { name };
  const members: Record<string, object> = {};
  const ids = new Map<number, string>();
  const taken = new Set<string>();

  const member = (kind: string, m: string, spec: unknown, suffixes: readonly string[]): void => {
    if (RESERVED.has(m)) clash(`${kind} name '${m}' in '${name}' clashes with a provider member`);
    if (taken.has(m)) clash(`'${m}' is defined twice in provider '${name}' (events, spans and counters share one namespace)`);
    if (m.endsWith(BEGIN) || m.endsWith(END) || m.endsWith(COUNTER)) clash(`${kind} name '${m}' in '${name}' may not end in ${BEGIN}, ${END} or ${COUNTER} (they mark span and counter types in traces)`);
    taken.add(m);
    if (typeof spec !== 'object' || spec === null) fail(`${kind} '${name}/${m}' needs a spec object`);
    const s = spec as { id: number; level?: unknown; version?: unknown; keywords?: unknown };
    if (!Number.isInteger(s.id) || s.id < 0 || s.id > 0xffff) fail(`${kind} '${name}/${m}' needs an integer id in 0..65535`);
    const dup = ids.get(s.id);
    if (dup !== undefined) clash(`${kind} id ${s.id} is used by both '${dup}' and '${m}' in provider '${name}'`);
    ids.set(s.id, m);
    const level = s.level ?? Level.Informational;
    if (!(typeof level === 'number' && Number.isInteger(level) && level >= 0 && level <= 5)) fail(`${kind} '${name}/${m}' has invalid level ${shown(level)}`);
    const version = s.version ?? 0;
    if (!(Number.isSafeInteger(version) && (version as number) >= 0)) fail(`${kind} '${name}/${m}' has invalid version ${shown(version)}; expected a non-negative integer`);
    checkNameLength(`${kind} name in '${name}'`, m, suffixes);
    const named = s.keywords ?? [];
    if (!Array.isArray(named)) fail(`${kind} '${name}/${m}' needs its keywords as an array of keyword names`);
    for (const k of named) if (typeof k !== 'string' || !Object.hasOwn(keywords, k)) fail(`provider '${name}' has no keyword ${typeof k === 'string' ? `'${k}'` : shown(k)}`);
  };
  const checkFieldName = (kind: string, path: string, field: string): void => {
    if (field === '__proto__') fail(`${kind} '${path}' has a field named '__proto__'; choose another name`);
    checkNameLength(`field name in '${path}'`, field);
  };
  const fieldList = (m: string, fields: unknown, carried: readonly string[]): void => {
    if (fields !== undefined && !Array.isArray(fields)) fail(`event '${name}/${m}' needs its fields as an array of [name, type]`);
    const list = (fields ?? []) as unknown[];
    if (list.length + carried.length > MAX_FIELDS_PER_EVENT) fail(`event '${name}/${m}' has ${list.length + carried.length} fields; at most ${MAX_FIELDS_PER_EVENT}`);
    const seen = new Set(carried);
    for (const f of list) {
      if (!Array.isArray(f) || typeof f[0] !== 'string' || !FIELD_TYPES.has(f[1])) fail(`event '${name}/${m}' has a bad field ${shown(f)}; expected [name, type]`);
      checkFieldName('event', `${name}/${m}`, f[0]);
      if (carried.includes(f[0])) clash(`span '${name}/${m}' may not declare field '${f[0]}': every span event carries it`);
      if (seen.has(f[0])) clash(`event '${name}/${m}' declares field '${f[0]}' twice`);
      seen.add(f[0]);
    }
  };
  const add = (m: string, object: Member): void => {
    members[m] = object;
    provider[m] = object;
  };

  for (const [m, spec] of Object.entries((def.events ?? {}) as Record<string, EventSpec>)) {
    member('event', m, spec, []);
    fieldList(m, spec.fields, []);
    add(m, new EventObject(name, m));
  }
  for (const [m, spec] of Object.entries((def.spans ?? {}) as Record<string, SpanSpec>)) {
    member('span', m, spec, [BEGIN, END]);
    fieldList(m, spec.fields, SPAN_BEGIN_FIELDS);
    fieldList(m, spec.endFields, SPAN_END_FIELDS);
    add(m, new SpanObject(name, m));
  }
  for (const [m, spec] of Object.entries((def.events ?? {}) as Record<string, EventSpec>)) {
    const span = spec.replacedBy;
    if (span !== undefined && (typeof span !== 'string' || !Object.hasOwn(def.spans ?? {}, span))) clash(`event '${name}/${m}' is replacedBy '${String(span)}', which is no span of the provider`);
  }
  for (const [m, spec] of Object.entries((def.counters ?? {}) as Record<string, CounterSpec>)) {
    member('counter', m, spec, [COUNTER]);
    const unit = spec.unit ?? 'value';
    if (typeof unit !== 'string' || unit === '') fail(`counter '${name}/${m}' needs a non-empty unit string`);
    checkFieldName('counter', `${name}/${m}`, unit);
    add(m, new CounterObject(name, m));
  }
  handOver({ abi: ABI, name, definition: def, members, provider });
  return provider as LiteProvider<E, S, C>;
}
