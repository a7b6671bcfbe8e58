import { type FieldSpec, isFieldType } from './field-type.js';
import { EventType, type TraceEventType } from './event-type.js';
import { isLevel, Level } from './level.js';
import { MAX_FIELDS_PER_EVENT, MAX_NAME_BYTES } from './definition-limits.js';
import { utf8Length } from './utf8.js';

export interface EventSpec<KW extends string = string> {
  readonly id: number;
  readonly version?: number;
  readonly level?: Level;
  readonly keywords?: readonly KW[];
  readonly fields?: readonly FieldSpec[];
  readonly doc?: string;
}

/** What a provider's enable/disable callback learns about the session that turned it on or off. */
export interface EnableContext {
  readonly sessionId: number;
  readonly keywords: bigint;
  readonly level: Level;
  /** `key=value` filter arguments from the provider spec. */
  readonly arguments: Readonly<Record<string, string>>;
}

export interface ProviderDefinition<K extends Record<string, bigint>, E> {
  readonly keywords?: K;
  readonly events: E;
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
  readonly events: readonly TraceEventType[];
  /** For callers that want to skip building a payload: would an event of this level/keywords be recorded? */
  isEnabled(level?: Level, keywordNames?: readonly string[]): boolean;
}

export type Provider<E> = ProviderBase & {
  readonly [N in keyof E]: E[N] extends { fields: infer F } ? TraceEventType<F> : TraceEventType<readonly []>;
};

export function eventEnabledFor(ev: { level: number; keywords: bigint }, on: { level: number; keywords: bigint }): boolean {
  return (ev.keywords === 0n || (ev.keywords & on.keywords) !== 0n) && (ev.level === Level.LogAlways || ev.level <= on.level);
}

/** Provider names start with a letter or '_' and use letters, digits, '.', '-' or '_'. */
export function isProviderName(name: unknown): name is string {
  return typeof name === 'string' && /^[A-Za-z_][\w.-]*$/.test(name);
}

/** Names travel in every trace's metadata; a reader refuses longer ones. */
function checkNameLength(what: string, name: string): void {
  const bytes = utf8Length(name);
  if (bytes > MAX_NAME_BYTES) throw new TypeError(`tracepipe: ${what} '${name.slice(0, 40)}…' is ${bytes} bytes of UTF-8; at most ${MAX_NAME_BYTES}`);
}

const RESERVED = new Set(['name', 'keywordMap', 'events', 'isEnabled', 'enablements', 'definition', 'onEnable', 'onDisable', 'onFlush']);

export class ProviderImpl implements ProviderBase {
  readonly events: EventType[] = [];
  /** Sessions that currently list this provider; maintained by the session layer. */
  enablements: ProviderEnablement[] = [];

  constructor(
    readonly name: string,
    readonly keywordMap: Readonly<Record<string, bigint>>,
    readonly onEnable?: (ctx: EnableContext) => void,
    readonly onDisable?: (ctx: EnableContext) => void,
    readonly onFlush?: () => void,
  ) {}

  keywordMask(names: readonly string[]): bigint {
    let mask = 0n;
    for (const n of names) {
      const bit = this.keywordMap[n];
      if (bit === undefined) throw new TypeError(`tracepipe: provider '${this.name}' has no keyword '${n}'`);
      mask |= bit;
    }
    return mask;
  }

  isEnabled(level: Level = Level.LogAlways, keywordNames: readonly string[] = []): boolean {
    const ev = { level, keywords: this.keywordMask(keywordNames) };
    return this.enablements.some((on) => eventEnabledFor(ev, on));
  }
}

type Listener = (p: ProviderImpl) => void;

/** This thread's providers. Each thread that imports tracepipe has its own, as each has its own events. */
class ProviderRegistry {
  private readonly byName = new Map<string, ProviderImpl>();
  private readonly listeners = new Set<Listener>();
  private nextTypeIndex = 1;

  allocateTypeIndex(): number {
    return this.nextTypeIndex++;
  }
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
}

export const providerRegistry = new ProviderRegistry();

export function defineProvider<const K extends Record<string, bigint>, const E extends Record<string, EventSpec<Extract<keyof K, string>>>>(
  name: string,
  def: ProviderDefinition<K, E>,
): Provider<E> {
  if (!isProviderName(name)) {
    throw new TypeError(`tracepipe: provider name ${JSON.stringify(name)} must start with a letter and use letters, digits, '.', '-' or '_'`);
  }
  checkNameLength('provider name', name);
  if (providerRegistry.get(name)) throw new Error(`tracepipe: a provider named '${name}' is already defined in this thread`);
  const keywords: Record<string, bigint> = { ...(def.keywords ?? {}) };
  for (const [k, v] of Object.entries(keywords)) {
    if (typeof v !== 'bigint' || v < 0n || v >= 1n << 64n) throw new TypeError(`tracepipe: keyword '${k}' of '${name}' must be a 64-bit bigint mask`);
  }
  const provider = new ProviderImpl(name, keywords, def.onEnable, def.onDisable, def.onFlush);
  const ids = new Map<number, string>();
  for (const [evName, spec] of Object.entries(def.events ?? {}) as [string, EventSpec][]) {
    if (RESERVED.has(evName)) throw new Error(`tracepipe: event name '${evName}' in '${name}' clashes with a provider member`);
    if (!Number.isInteger(spec.id) || spec.id < 0 || spec.id > 0xffff) throw new TypeError(`tracepipe: event '${name}/${evName}' needs an integer id in 0..65535`);
    const dup = ids.get(spec.id);
    if (dup) throw new Error(`tracepipe: event id ${spec.id} is used by both '${dup}' and '${evName}' in provider '${name}'`);
    ids.set(spec.id, evName);
    const level = spec.level ?? Level.Informational;
    if (!isLevel(level)) throw new TypeError(`tracepipe: event '${name}/${evName}' has invalid level ${String(level)}`);
    checkNameLength(`event name in '${name}'`, evName);
    const fields = spec.fields ?? [];
    if (!Array.isArray(fields)) throw new TypeError(`tracepipe: event '${name}/${evName}' needs its fields as an array of [name, type]`);
    if (fields.length > MAX_FIELDS_PER_EVENT) throw new TypeError(`tracepipe: event '${name}/${evName}' has ${fields.length} fields; at most ${MAX_FIELDS_PER_EVENT}`);
    const seen = new Set<string>();
    for (const f of fields) {
      if (!Array.isArray(f) || typeof f[0] !== 'string' || !isFieldType(f[1])) {
        throw new TypeError(`tracepipe: event '${name}/${evName}' has a bad field ${JSON.stringify(f)}; expected [name, type]`);
      }
      // Decoded events keep every field as an own property, but a consumer that merges them into
      // another object with assignment would set its prototype instead: refuse the name outright.
      if (f[0] === '__proto__') throw new TypeError(`tracepipe: event '${name}/${evName}' has a field named '__proto__'; choose another name`);
      checkNameLength(`field name in '${name}/${evName}'`, f[0]);
      if (seen.has(f[0])) throw new Error(`tracepipe: event '${name}/${evName}' declares field '${f[0]}' twice`);
      seen.add(f[0]);
    }
    const ev = new EventType(name, evName, spec.id, spec.version ?? 0, level, provider.keywordMask(spec.keywords ?? []), fields.map((f) => [f[0], f[1]] as const), providerRegistry.allocateTypeIndex());
    provider.events.push(ev);
    (provider as unknown as Record<string, unknown>)[evName] = ev;
  }
  providerRegistry.add(provider);
  return provider as unknown as Provider<E>;
}
