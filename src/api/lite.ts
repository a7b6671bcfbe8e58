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

const FIELD_TYPES = new Set<unknown>(['bool', 'u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64', 'string', 'bytes']);
const TAKEN = new Set(['name', 'enablements']);

function fail(message: string): never {
  throw new TypeError(`tracepipe: ${message}`);
}

function checkSpec(where: string, spec: unknown, ids: Set<number>, keywords: object): void {
  if (typeof spec !== 'object' || spec === null) fail(`'${where}' needs a spec object`);
  const { id, level, fields, endFields } = spec as SpanSpec;
  for (const k of (spec as SpanSpec).keywords ?? []) if (!Object.hasOwn(keywords, k)) fail(`'${where}' names keyword '${k}', which its provider does not define`);
  if (!Number.isInteger(id) || id < 0 || id > 0xffff) fail(`'${where}' needs an integer id in 0..65535`);
  if (ids.has(id)) fail(`'${where}' reuses id ${id}`);
  ids.add(id);
  if (level !== undefined && !(Number.isInteger(level) && level >= 0 && level <= 5)) fail(`'${where}' has invalid level ${String(level)}`);
  for (const f of [...(fields ?? []), ...(endFields ?? [])]) {
    if (!Array.isArray(f) || typeof f[0] !== 'string' || !FIELD_TYPES.has(f[1])) fail(`'${where}' has a bad field ${JSON.stringify(f)}; expected [name, type]`);
  }
}

/** Defines a provider, as tracepipe's defineProvider does; its objects work, disabled, with no host at all. */
export function defineProvider<
  const K extends Record<string, bigint>,
  const E extends Record<string, EventSpec<Extract<keyof K, string>>> = {},
  const S extends Record<string, SpanSpec<Extract<keyof K, string>>> = {},
  const C extends Record<string, CounterSpec<Extract<keyof K, string>>> = {},
>(name: string, def: ProviderDefinition<K, E, S, C>): LiteProvider<E, S, C> {
  if (typeof name !== 'string' || !/^[A-Za-z_][\w.-]*$/.test(name)) fail(`provider name ${JSON.stringify(name)} must start with a letter and use letters, digits, '.', '-' or '_'`);
  if (typeof def !== 'object' || def === null) fail(`defineProvider('${name}', definition) needs a definition object`);
  const keywords = def.keywords ?? {};
  for (const [k, v] of Object.entries(keywords)) if (typeof v !== 'bigint' || v < 0n || v >= 1n << 64n) fail(`keyword '${k}' of '${name}' must be a 64-bit bigint mask`);
  const provider: Record<string, unknown> = { name };
  const members: Record<string, object> = {};
  const ids = new Set<number>();
  const sections: [unknown, (member: string) => Member][] = [
    [def.events, (m) => new EventObject(name, m)],
    [def.spans, (m) => new SpanObject(name, m)],
    [def.counters, (m) => new CounterObject(name, m)],
  ];
  for (const [section, make] of sections) {
    for (const [member, spec] of Object.entries((section ?? {}) as Record<string, unknown>)) {
      if (TAKEN.has(member) || member in members) fail(`'${name}/${member}' is defined twice or clashes with a provider member`);
      checkSpec(`${name}/${member}`, spec, ids, keywords);
      members[member] = provider[member] = make(member);
    }
  }
  handOver({ abi: ABI, name, definition: def, members, provider });
  return provider as LiteProvider<E, S, C>;
}
