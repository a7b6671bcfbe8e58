import { CounterType, type CounterSpec, type TraceCounterType } from './counter-type.js';
import { EventType, type MemberHeader, type TraceEventType } from './event-type.js';
import { type FieldSpec, isFieldType } from './field-type.js';
import { isLevel, Level } from './level.js';
import { MAX_FIELDS_PER_EVENT, MAX_NAME_BYTES } from './definition-limits.js';
import { utf8Length } from './utf8.js';
import { foreignHost, HOST_KEY, HOST_VERSION, type ProviderHost } from './provider-host.js';
import { SpanType, type SpanSpec, type TraceSpanType } from './span-type.js';
import { COUNTER_SUFFIX, DEFAULT_COUNTER_UNIT, hasReservedSuffix, SPAN_BEGIN_FIELDS, SPAN_BEGIN_SUFFIX, SPAN_END_FIELDS, SPAN_END_SUFFIX } from './type-role.js';
import { errorMessage } from './error-message.js';
import { loadModule } from './load-module.js';
import { inServiceThread } from './this-thread.js';

export interface EventSpec<KW extends string = string> {
  readonly id: number;
  readonly version?: number;
  readonly level?: Level;
  readonly keywords?: readonly KW[];
  readonly fields?: readonly FieldSpec[];
  readonly doc?: string;
  /**
   * A span of the same provider that records all this event says: a session that records the span
   * does not get the event as well (Node.Channels' HttpServerRequest and its HttpServer span).
   */
  readonly replacedBy?: string;
}

/** What a provider's enable/disable callback learns about the session that turned it on or off. */
export interface EnableContext {
  readonly sessionId: number;
  readonly keywords: bigint;
  readonly level: Level;
  /** `key=value` filter arguments from the provider spec. */
  readonly arguments: Readonly<Record<string, string>>;
}

export interface ProviderDefinition<K extends Record<string, bigint>, E, S = {}, C = {}> {
  readonly keywords?: K;
  readonly events?: E;
  readonly spans?: S;
  readonly counters?: C;
  readonly onEnable?: (ctx: EnableContext) => void;
  readonly onDisable?: (ctx: EnableContext) => void;
  /**
   * Writes what the provider holds back (observed but not yet written), while events still reach
   * every session: called before a session stops, rundown or not, and as this thread exits.
   */
  readonly onFlush?: () => void;
}

/** One session's wish for a provider. */
export interface ProviderEnablement {
  readonly sessionId: number;
  readonly keywords: bigint;
  readonly level: Level;
  readonly arguments: Readonly<Record<string, string>>;
}

export interface ProviderBase {
  readonly name: string;
  readonly keywordMap: Readonly<Record<string, bigint>>;
  /** Every event type the provider writes: its events, each span's begin and end, each counter's. */
  readonly events: readonly TraceEventType[];
  readonly spans: readonly TraceSpanType[];
  readonly counters: readonly TraceCounterType[];
  /** For callers that want to skip building a payload: would an event of this level/keywords be recorded? */
  isEnabled(level?: Level, keywordNames?: readonly string[]): boolean;
}

type FieldsOf<T, P extends string> = T extends { readonly [K in P]: infer F } ? F : readonly [];

export type Provider<E, S = {}, C = {}> = ProviderBase & {
  readonly [N in keyof E]: TraceEventType<FieldsOf<E[N], 'fields'>>;
} & {
  readonly [N in keyof S]: TraceSpanType<FieldsOf<S[N], 'fields'>, FieldsOf<S[N], 'endFields'>>;
} & {
  readonly [N in keyof C]: TraceCounterType;
};

export function eventEnabledFor(ev: { level: number; keywords: bigint }, on: { level: number; keywords: bigint }): boolean {
  return (ev.keywords === 0n || (ev.keywords & on.keywords) !== 0n) && (ev.level === Level.LogAlways || ev.level <= on.level);
}

/** Provider names start with a letter or '_' and use letters, digits, '.', '-' or '_'. */
export function isProviderName(name: unknown): name is string {
  return typeof name === 'string' && /^[A-Za-z_][\w.-]*$/.test(name);
}

/**
 * Names travel in every trace's metadata; a reader refuses longer ones. A span's and a counter's
 * types are named with a suffix (type-role.ts), which counts too.
 */
function checkNameLength(what: string, name: string, suffixes: readonly string[] = []): void {
  const bytes = utf8Length(name);
  const limit = MAX_NAME_BYTES - Math.max(0, ...suffixes.map((x) => x.length));
  if (bytes > limit) {
    const why = suffixes.length ? ` (its event types add ${suffixes.map((x) => `'${x}'`).join(' and ')})` : '';
    throw new TypeError(`tracepipe: ${what} '${name.slice(0, 40)}…' is ${bytes} bytes of UTF-8; at most ${limit}${why}`);
  }
}

/** A value as an error message shows it, whatever it is (JSON.stringify throws on a bigint or a cycle). */
function shown(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return typeof v;
  }
}

/**
 * Member names a provider object has already, so no event, span or counter may take them; '__proto__'
 * would set the provider's prototype. tracepipe/lite refuses the same names (src/api/lite.ts).
 */
const RESERVED = new Set(['name', 'keywordMap', 'events', 'spans', 'counters', 'isEnabled', 'enablements', 'definition', 'signature', 'onEnable', 'onDisable', 'onFlush', 'addMirror', '__proto__']);

/** The mask of the keywords `names` (of the provider's own keywords, never an inherited property). */
function keywordMask(provider: string, keywordMap: Readonly<Record<string, bigint>>, names: readonly unknown[]): bigint {
  let mask = 0n;
  for (const n of names) {
    if (typeof n !== 'string' || !Object.hasOwn(keywordMap, n)) throw new TypeError(`tracepipe: provider '${provider}' has no keyword ${typeof n === 'string' ? `'${n}'` : shown(n)}`);
    mask |= keywordMap[n]!;
  }
  return mask;
}

/** Something whose `enablements` follows a provider's: the provider objects of other copies and of tracepipe/lite. */
interface EnablementsMirror {
  enablements: readonly ProviderEnablement[];
}

export class ProviderImpl implements ProviderBase {
  // Private fields, so no member name (an event called 'current') can shadow them.
  readonly #events: EventType[] = [];
  readonly #spans: SpanType[] = [];
  readonly #counters: CounterType[] = [];
  #current: readonly ProviderEnablement[] = [];
  readonly #mirrors: EnablementsMirror[] = [];
  /** Makes the members of a provider defined with its members deferred (defineBuiltinProvider); undefined once made. */
  #makeMembers: (() => void) | undefined;
  /** What names a built-in provider's module that attaches its callbacks (a file: URL), until it has loaded. */
  #machinery: (() => string) | undefined;
  /** That module's load where it is asynchronous (Node without require() of ES modules), once begun. */
  #machineryLoading: Promise<void> | undefined;
  /** Callbacks its module gave before any session enabled it (the module ran with the session machinery): attached by loadMachinery. */
  #heldCallbacks: ProviderCallbacks | undefined;

  constructor(
    readonly name: string,
    readonly keywordMap: Readonly<Record<string, bigint>>,
    /** Makes the definition's canonical form, when first asked for (a look at every definition's every field). */
    makeSignature: () => string,
    public onEnable?: (ctx: EnableContext) => void,
    public onDisable?: (ctx: EnableContext) => void,
    public onFlush?: () => void,
  ) {
    this.#makeSignature = makeSignature;
  }

  readonly #makeSignature: () => string;
  #signature: string | undefined;
  /** The definition in a canonical form: two definitions of one provider are the same when these are equal. */
  get signature(): string {
    return (this.#signature ??= this.#makeSignature());
  }

  get events(): EventType[] {
    this.#makeMembers?.();
    return this.#events;
  }
  get spans(): SpanType[] {
    this.#makeMembers?.();
    return this.#spans;
  }
  get counters(): CounterType[] {
    this.#makeMembers?.();
    return this.#counters;
  }

  /** Whether its members exist yet: a provider whose members are deferred has no event a session could have enabled. */
  get membersMade(): boolean {
    return this.#makeMembers === undefined;
  }

  /**
   * Defers making the members `names` to the first read of any of them, or of events, spans or
   * counters: `make` adds them to the provider.
   */
  deferMembers(names: readonly string[], make: () => void): void {
    const self = this as unknown as Record<string, unknown>;
    this.#makeMembers = () => {
      this.#makeMembers = undefined;
      // Redefined as data properties, not deleted: V8 keeps the object's fast properties then.
      for (const n of names) Object.defineProperty(this, n, { value: undefined, writable: true, enumerable: true, configurable: true });
      make();
    };
    for (const n of names) {
      Object.defineProperty(this, n, {
        configurable: true,
        enumerable: true,
        get: () => {
          this.#makeMembers?.();
          return self[n];
        },
      });
    }
  }

  /**
   * A built-in provider's callbacks live in the module `url` names (a file: URL), loaded when a
   * session first enables it (loadMachinery): a process pays for the machinery of the providers it
   * traces, not of all of them. `url` is asked only then: the eight definitions computing theirs from
   * their own module's URL as they ran cost every `import 'tracepipe'` ~2 ms (V8's `import.meta` and
   * 16 URL parses; BENCHMARKS.md §30.2).
   */
  deferMachinery(url: () => string): void {
    this.#machinery = url;
  }

  /**
   * Loads the module that gives this provider its callbacks, once: at once where Node can, and then
   * returns undefined; elsewhere the promise settles (never rejects) when it has loaded. A module
   * that fails to load is reported as a warning: the provider's events defined by callbacks are then
   * not written, and the session says so rather than failing.
   */
  loadMachinery(): Promise<void> | undefined {
    const url = this.#machinery;
    if (url === undefined) return this.#machineryLoading;
    this.#machinery = undefined;
    const held = this.#heldCallbacks;
    if (held) {
      this.#heldCallbacks = undefined;
      attachCallbacks(this, held);
      return undefined;
    }
    const failed = (e: unknown): void => void process.emitWarning(`tracepipe: provider '${this.name}' is not recorded: its machinery did not load: ${errorMessage(e)}`);
    try {
      const loading = loadModule(url());
      if (loading) this.#machineryLoading = loading.then(() => undefined, failed);
    } catch (e) {
      failed(e);
    }
    return this.#machineryLoading;
  }

  /**
   * Keeps `callbacks` for loadMachinery if no session has enabled this provider yet, and says whether
   * it did: the default profile's providers' modules run as the session machinery loads, as part of
   * its bundle (scripts/bundle-main-thread.mjs), and a session that enables none of them must run
   * none of their callbacks. Not in tracepipe's helper threads, which never load machinery: the
   * modules their bundles hold give them their providers' callbacks as they run.
   */
  holdCallbacks(callbacks: ProviderCallbacks): boolean {
    if (this.#machinery === undefined || inServiceThread()) return false;
    this.#heldCallbacks = callbacks;
    return true;
  }

  /** Sessions that currently list this provider; maintained by the session layer. */
  get enablements(): readonly ProviderEnablement[] {
    return this.#current;
  }
  set enablements(list: readonly ProviderEnablement[]) {
    this.#current = list;
    for (const m of this.#mirrors) m.enablements = list;
  }

  addMirror(m: EnablementsMirror): void {
    this.#mirrors.push(m);
    m.enablements = this.#current;
  }

  isEnabled(level: Level = Level.LogAlways, keywordNames: readonly string[] = []): boolean {
    if (!Array.isArray(keywordNames)) throw new TypeError(`tracepipe: isEnabled() needs keyword names as an array; got ${shown(keywordNames)}`);
    const ev = { level, keywords: keywordMask(this.name, this.keywordMap, keywordNames) };
    return this.enablements.some((on) => eventEnabledFor(ev, on));
  }
}

type Listener = (p: ProviderImpl) => void;

/** This thread's providers. Each thread that imports tracepipe has its own, as each has its own events. */
class ProviderRegistry {
  private readonly byName = new Map<string, ProviderImpl>();
  private readonly listeners = new Set<Listener>();
  private readonly callbackListeners = new Set<Listener>();
  private nextTypeIndex = 1;

  readonly allocateTypeIndex = (): number => this.nextTypeIndex++;

  add(p: ProviderImpl): void {
    if (this.byName.has(p.name)) throw new Error(`tracepipe: a provider named '${p.name}' is already defined in this thread`);
    this.byName.set(p.name, p);
    for (const l of this.listeners) l(p);
  }
  get(name: string): ProviderImpl | undefined {
    return this.byName.get(name);
  }
  all(): IterableIterator<ProviderImpl> {
    return this.byName.values();
  }
  onDefine(l: Listener): void {
    this.listeners.add(l);
  }
  /** `l` hears of each provider given its callbacks (attachCallbacks), which may come after sessions enabled it. */
  onCallbacks(l: Listener): void {
    this.callbackListeners.add(l);
  }
  callbacksAttached(p: ProviderImpl): void {
    for (const l of this.callbackListeners) l(p);
  }
}

export const providerRegistry = new ProviderRegistry();

/** What a provider does as sessions enable and disable it (the definition's callbacks). */
export interface ProviderCallbacks {
  readonly onEnable?: (ctx: EnableContext) => void;
  readonly onDisable?: (ctx: EnableContext) => void;
  readonly onFlush?: () => void;
}

/**
 * Gives a built-in provider its callbacks. Its definition loads with `import 'tracepipe'`, what it
 * does loads when a session first enables it (ProviderImpl.loadMachinery); the sessions that enabled
 * it meanwhile then get its onEnable. A provider this copy handed to another copy's host has none:
 * the host's own built-in serves.
 */
export function attachCallbacks(p: ProviderBase, callbacks: ProviderCallbacks): void {
  if (!(p instanceof ProviderImpl && providerRegistry.get(p.name) === p)) return;
  if (p.holdCallbacks(callbacks)) return;
  Object.assign(p, callbacks);
  providerRegistry.callbacksAttached(p);
}
/** Providers this copy handed to another copy's host (it keeps no registry of its own then). */
const handedOver = new Set<string>();


export function definitionSignature(def: ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>): string {
  const { keywords, events, spans, counters } = def;
  return JSON.stringify({ keywords, events, spans, counters }, (k, v: unknown) => (k === 'doc' ? undefined : typeof v === 'bigint' ? `${v}n` : v));
}

/**
 * Checks a definition's name and keywords and makes its provider, with no members yet. The
 * definition's signature is taken now, from the object as it is, unless it is one of tracepipe's own
 * (`builtIn`), which nobody changes: then when first compared, not by every import.
 */
function newProvider(name: string, def: ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>, builtIn = false): ProviderImpl {
  if (!isProviderName(name)) {
    throw new TypeError(`tracepipe: provider name ${shown(name)} must start with a letter and use letters, digits, '.', '-' or '_'`);
  }
  checkNameLength('provider name', name);
  if (typeof def !== 'object' || def === null) throw new TypeError(`tracepipe: defineProvider('${name}', definition) needs a definition object`);
  const keywords: Record<string, bigint> = { ...(def.keywords ?? {}) };
  for (const [k, v] of Object.entries(keywords)) {
    if (typeof v !== 'bigint' || v < 0n || v >= 1n << 64n) throw new TypeError(`tracepipe: keyword '${k}' of '${name}' must be a 64-bit bigint mask`);
  }
  const signature = builtIn ? undefined : definitionSignature(def);
  return new ProviderImpl(name, keywords, () => signature ?? definitionSignature(def), def.onEnable, def.onDisable, def.onFlush);
}

/** Checks a definition's events, spans and counters and adds them to `provider`, in that order. */
function addMembers(provider: ProviderImpl, def: ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>): void {
  const { name } = provider;
  const ids = new Map<number, string>();
  const members = new Set<string>();

  /**
   * What every member kind shares: a free member name, a unique id, a level, a version and keywords.
   * tracepipe/lite makes the same checks in the same order, with the same errors (src/api/lite.ts).
   */
  const member = (kind: string, memberName: string, spec: CounterSpec, suffixes: readonly string[]): MemberHeader => {
    if (RESERVED.has(memberName)) throw new Error(`tracepipe: ${kind} name '${memberName}' in '${name}' clashes with a provider member`);
    if (members.has(memberName)) throw new Error(`tracepipe: '${memberName}' is defined twice in provider '${name}' (events, spans and counters share one namespace)`);
    if (hasReservedSuffix(memberName)) throw new Error(`tracepipe: ${kind} name '${memberName}' in '${name}' may not end in ${SPAN_BEGIN_SUFFIX}, ${SPAN_END_SUFFIX} or ${COUNTER_SUFFIX} (they mark span and counter types in traces)`);
    members.add(memberName);
    if (typeof spec !== 'object' || spec === null) throw new TypeError(`tracepipe: ${kind} '${name}/${memberName}' needs a spec object`);
    if (!Number.isInteger(spec.id) || spec.id < 0 || spec.id > 0xffff) throw new TypeError(`tracepipe: ${kind} '${name}/${memberName}' needs an integer id in 0..65535`);
    const dup = ids.get(spec.id);
    if (dup !== undefined) throw new Error(`tracepipe: ${kind} id ${spec.id} is used by both '${dup}' and '${memberName}' in provider '${name}'`);
    ids.set(spec.id, memberName);
    const level = spec.level ?? Level.Informational;
    if (!isLevel(level)) throw new TypeError(`tracepipe: ${kind} '${name}/${memberName}' has invalid level ${shown(level)}`);
    const version = spec.version ?? 0;
    if (!Number.isSafeInteger(version) || version < 0) throw new TypeError(`tracepipe: ${kind} '${name}/${memberName}' has invalid version ${shown(version)}; expected a non-negative integer`);
    checkNameLength(`${kind} name in '${name}'`, memberName, suffixes);
    const keywords = spec.keywords ?? [];
    if (!Array.isArray(keywords)) throw new TypeError(`tracepipe: ${kind} '${name}/${memberName}' needs its keywords as an array of keyword names`);
    return { provider: name, name: memberName, id: spec.id, version, level, keywords: keywordMask(name, provider.keywordMap, keywords) };
  };
  /** A field name of member `path` (a counter's unit is one: it names the counter's field). */
  const checkFieldName = (kind: string, path: string, fieldName: string): void => {
    // Decoded events keep every field as an own property, but a consumer that merges them into
    // another object with assignment would set its prototype instead: refuse the name outright.
    if (fieldName === '__proto__') throw new TypeError(`tracepipe: ${kind} '${path}' has a field named '__proto__'; choose another name`);
    checkNameLength(`field name in '${path}'`, fieldName);
  };
  const fieldList = (memberName: string, fields: readonly FieldSpec[] | undefined, taken: readonly FieldSpec[]): FieldSpec[] => {
    if (fields !== undefined && !Array.isArray(fields)) throw new TypeError(`tracepipe: event '${name}/${memberName}' needs its fields as an array of [name, type]`);
    if ((fields?.length ?? 0) + taken.length > MAX_FIELDS_PER_EVENT) throw new TypeError(`tracepipe: event '${name}/${memberName}' has ${(fields?.length ?? 0) + taken.length} fields; at most ${MAX_FIELDS_PER_EVENT}`);
    const seen = new Set<string>(taken.map((f) => f[0]));
    for (const f of fields ?? []) {
      if (!Array.isArray(f) || typeof f[0] !== 'string' || !isFieldType(f[1])) {
        throw new TypeError(`tracepipe: event '${name}/${memberName}' has a bad field ${shown(f)}; expected [name, type]`);
      }
      checkFieldName('event', `${name}/${memberName}`, f[0]);
      if (taken.some((t) => t[0] === f[0])) throw new Error(`tracepipe: span '${name}/${memberName}' may not declare field '${f[0]}': every span event carries it`);
      if (seen.has(f[0])) throw new Error(`tracepipe: event '${name}/${memberName}' declares field '${f[0]}' twice`);
      seen.add(f[0]);
    }
    return (fields ?? []).map((f) => [f[0], f[1]] as const);
  };
  const entries = <T>(section: unknown) => Object.entries((section ?? {}) as Record<string, T>);

  for (const [evName, spec] of entries<EventSpec>(def.events)) {
    const m = member('event', evName, spec, []);
    const ev = new EventType(name, evName, m.id, m.version, m.level, m.keywords, fieldList(evName, spec.fields, []), providerRegistry.allocateTypeIndex());
    provider.events.push(ev);
    (provider as unknown as Record<string, unknown>)[evName] = ev;
  }
  for (const [spanName, spec] of entries<SpanSpec>(def.spans)) {
    const m = member('span', spanName, spec, [SPAN_BEGIN_SUFFIX, SPAN_END_SUFFIX]);
    const fields = fieldList(spanName, spec.fields, SPAN_BEGIN_FIELDS);
    const endFields = fieldList(spanName, spec.endFields, SPAN_END_FIELDS);
    const span = new SpanType(m, fields, endFields, providerRegistry.allocateTypeIndex);
    provider.events.push(span.beginType, span.endType);
    provider.spans.push(span);
    (provider as unknown as Record<string, unknown>)[spanName] = span;
  }
  for (const [evName, spec] of entries<EventSpec>(def.events)) {
    if (spec.replacedBy === undefined) continue;
    const span = typeof spec.replacedBy === 'string' ? provider.spans.find((s) => s.name === spec.replacedBy) : undefined;
    if (span === undefined) throw new Error(`tracepipe: event '${name}/${evName}' is replacedBy '${String(spec.replacedBy)}', which is no span of the provider`);
    provider.events.find((e) => e.name === evName)!.replacedBy = span.beginType;
  }
  for (const [counterName, spec] of entries<CounterSpec>(def.counters)) {
    const m = member('counter', counterName, spec, [COUNTER_SUFFIX]);
    const unit = spec.unit ?? DEFAULT_COUNTER_UNIT;
    if (typeof unit !== 'string' || unit === '') throw new TypeError(`tracepipe: counter '${name}/${counterName}' needs a non-empty unit string`);
    checkFieldName('counter', `${name}/${counterName}`, unit);
    const counter = new CounterType(m, unit, providerRegistry.allocateTypeIndex(), typeof spec.doc === 'string' ? spec.doc : '');
    provider.events.push(counter.type);
    provider.counters.push(counter);
    (provider as unknown as Record<string, unknown>)[counterName] = counter;
  }
}

/** Checks one definition and builds its provider; nothing is registered yet. */
function buildProvider(name: string, def: ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>): ProviderImpl {
  const provider = newProvider(name, def);
  addMembers(provider, def);
  return provider;
}

/** The objects a provider's library calls, by member name: what a host links to its own. */
function membersOf(p: ProviderImpl): Record<string, object> {
  const out: Record<string, object> = {};
  for (const m of [...p.events, ...p.spans, ...p.counters]) {
    const own = (p as unknown as Record<string, unknown>)[m.name];
    if (own === m) out[m.name] = m;
  }
  return out;
}

/**
 * Defines this thread's provider in the host's registry (this copy is the host): sessions that name it
 * get its events. Throws on a bad definition or a name already defined.
 */
export function defineHostProvider(name: string, def: ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>, fromComponent = false): ProviderImpl {
  if (providerRegistry.get(name)) throw new Error(`tracepipe: a provider named '${name}' is already defined in this thread`);
  const provider = buildProvider(name, def);
  if (fromComponent) adoptedNames.add(name);
  providerRegistry.add(provider);
  return provider;
}

/**
 * Defines one of tracepipe's own providers, its events, spans and counters made when first used (an
 * enable, a write, a look at `events`): `import 'tracepipe'` defines every built-in provider, and a
 * process uses few of them, if any. Its name and keywords are checked now, its members when they are
 * made: a bad built-in definition is a bug, which the test that makes every built-in's members
 * finds. `machinery` gives the module that attaches its callbacks (a file: URL), loaded when a
 * session first enables it. Under another copy's host it is defined as any provider is (the host's serves).
 */
export function defineBuiltinProvider<
  const K extends Record<string, bigint>,
  const E extends Record<string, EventSpec<Extract<keyof K, string>>> = {},
  const S extends Record<string, SpanSpec<Extract<keyof K, string>>> = {},
  const C extends Record<string, CounterSpec<Extract<keyof K, string>>> = {},
>(name: string, def: ProviderDefinition<K, E, S, C>, machinery: () => string): Provider<E, S, C> {
  if (foreignHost || adoptedNames.has(name)) return defineProvider(name, def);
  if (providerRegistry.get(name)) throw new Error(`tracepipe: a provider named '${name}' is already defined in this thread`);
  const general = def as ProviderDefinition<Record<string, bigint>, unknown, unknown, unknown>;
  const provider = newProvider(name, general, true);
  provider.deferMachinery(machinery);
  provider.deferMembers([general.events, general.spans, general.counters].flatMap((section) => Object.keys(section ?? {})), () => addMembers(provider, general));
  providerRegistry.add(provider);
  return provider as unknown as Provider<E, S, C>;
}

/** Providers the host defined for a component (tracepipe/lite, another copy): this copy may define them again, as one more component. */
const adoptedNames = new Set<string>();

export function defineProvider<
  const K extends Record<string, bigint>,
  const E extends Record<string, EventSpec<Extract<keyof K, string>>> = {},
  const S extends Record<string, SpanSpec<Extract<keyof K, string>>> = {},
  const C extends Record<string, CounterSpec<Extract<keyof K, string>>> = {},
>(name: string, def: ProviderDefinition<K, E, S, C>): Provider<E, S, C> {
  // Another copy of tracepipe hosts this thread, or another copy of this library defined the provider
  // first: this definition is a component of it, through the host (docs/LITE.md).
  const host = foreignHost ?? (adoptedNames.has(name) ? ((globalThis as Record<symbol, unknown>)[HOST_KEY] as ProviderHost) : undefined);
  if (!host) return defineHostProvider(name, def) as unknown as Provider<E, S, C>;
  if (handedOver.has(name)) throw new Error(`tracepipe: a provider named '${name}' is already defined in this thread`);
  const provider = buildProvider(name, def);
  handedOver.add(name);
  try {
    host.register({ abi: HOST_VERSION, name, definition: def, members: membersOf(provider), provider });
  } catch (e) {
    // A host promises not to throw; one that does must not break the library defining a provider.
    process.stderr.write(`tracepipe: the host in this thread failed to adopt provider '${name}' (${errorMessage(e)}); its events stay disabled\n`);
  }
  return provider as unknown as Provider<E, S, C>;
}
