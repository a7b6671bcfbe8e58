import { Level } from '../schema/level.js';
import { isProviderName } from '../schema/provider.js';

/** One provider a session asks for. */
export interface ProviderRequest {
  readonly name: string;
  /** Omitted: all keywords. */
  readonly keywords?: bigint;
  /** Omitted: Verbose. */
  readonly level?: Level;
  readonly arguments?: Readonly<Record<string, string>>;
}

export interface ProviderConfig {
  readonly name: string;
  readonly keywords: bigint;
  readonly level: Level;
  readonly arguments: Readonly<Record<string, string>>;
}

export const ALL_KEYWORDS = (1n << 64n) - 1n;

export class ProviderSpecError extends Error {
  override readonly name = 'ProviderSpecError';
}

/** Splits on `sep` outside double quotes. */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of s) {
    if (ch === '"') quoted = !quoted;
    if (ch === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) throw new ProviderSpecError(`unterminated quote in provider spec '${s}'`);
  out.push(cur);
  return out;
}

const LEVEL_NAMES: Record<string, Level> = Object.fromEntries(Object.entries(Level).map(([k, v]) => [k.toLowerCase(), v]));

function parseLevel(text: string, spec: string): Level {
  const t = text.trim();
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    if (n <= 5) return n as Level;
  } else if (Object.hasOwn(LEVEL_NAMES, t.toLowerCase())) return LEVEL_NAMES[t.toLowerCase()]!;
  throw new ProviderSpecError(`bad level '${t}' in '${spec}': use 0-5 or LogAlways, Critical, Error, Warning, Informational, Verbose`);
}

function parseKeywords(text: string, spec: string): bigint {
  const t = text.trim();
  if (t === '' || t === '*') return ALL_KEYWORDS;
  if (!/^(0x)?[0-9a-f]{1,16}$/i.test(t)) throw new ProviderSpecError(`bad keywords '${t}' in '${spec}': expected a hex mask such as 0x3`);
  return BigInt(t.toLowerCase().startsWith('0x') ? t : `0x${t}`);
}

function parseArguments(text: string, spec: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const part of splitOutsideQuotes(text, ';')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new ProviderSpecError(`bad argument '${part}' in '${spec}': expected key=value`);
    let value = part.slice(eq + 1);
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    // Defined, not assigned: a key '__proto__' is an argument like any other, not the object's prototype.
    Object.defineProperty(args, part.slice(0, eq).trim(), { value, enumerable: true, writable: true, configurable: true });
  }
  return args;
}

function parseEntry(entry: string, spec: string): ProviderConfig {
  const e = entry.trim();
  if (e === '') throw new ProviderSpecError(`empty provider entry in '${spec}'`);
  const parts = splitOutsideQuotes(e, ':');
  const [name, kw, level] = parts;
  const rest = parts.slice(3).join(':');
  if (!isProviderName(name?.trim())) throw new ProviderSpecError(`bad provider name '${name ?? ''}' in '${spec}'`);
  return {
    name: name.trim(),
    keywords: kw === undefined ? ALL_KEYWORDS : parseKeywords(kw, spec),
    level: level === undefined || level.trim() === '' ? Level.Verbose : parseLevel(level, spec),
    arguments: parts.length > 3 ? parseArguments(rest, spec) : {},
  };
}

function isProviderEntry(text: string): boolean {
  try {
    parseEntry(text, text);
    return true;
  } catch {
    return false;
  }
}

/**
 * dotnet-trace's provider syntax: `Name[:Keywords[:Level[:key=value;key2="a;b"]]]`, comma separated.
 * Omitted keywords mean all; an omitted level means Verbose. A list argument may go on after a comma
 * (`Node.Channels:0x8:5:tracing=undici:request,mylib:query`): after an entry with arguments, text
 * that is not a provider entry continues the last value (quote it to be explicit).
 */
export function parseProviderSpec(spec: string): ProviderConfig[] {
  if (typeof spec !== 'string' || spec.trim() === '') throw new ProviderSpecError('empty provider spec: name at least one provider, e.g. "Demo.App:0x1:4"');
  const entries: string[] = [];
  for (const piece of splitOutsideQuotes(spec, ',')) {
    const last = entries.length - 1;
    if (last >= 0 && splitOutsideQuotes(entries[last]!, ':').length > 3 && piece.trim() !== '' && !isProviderEntry(piece)) entries[last] += `,${piece}`;
    else entries.push(piece);
  }
  return entries.map((entry) => parseEntry(entry, spec));
}

export function normalizeProviders(p: string | readonly ProviderRequest[]): ProviderConfig[] {
  if (typeof p === 'string') return parseProviderSpec(p);
  if (!Array.isArray(p) || p.length === 0) throw new ProviderSpecError('providers must be a spec string or a non-empty array of { name, keywords?, level? }');
  return p.map((r) => {
    if (!r || !isProviderName(r.name)) throw new ProviderSpecError(`bad provider entry ${JSON.stringify(r?.name)}`);
    if (r.keywords !== undefined && (typeof r.keywords !== 'bigint' || r.keywords < 0n)) throw new ProviderSpecError(`keywords of '${r.name}' must be a non-negative bigint`);
    if (r.level !== undefined && !(Number.isInteger(r.level) && r.level >= 0 && r.level <= 5)) throw new ProviderSpecError(`level of '${r.name}' must be 0-5`);
    return { name: r.name, keywords: r.keywords ?? ALL_KEYWORDS, level: r.level ?? Level.Verbose, arguments: { ...(r.arguments ?? {}) } };
  });
}

export function formatProviderSpec(providers: readonly ProviderConfig[]): string {
  return providers
    .map((p) => {
      const args = Object.entries(p.arguments).map(([k, v]) => (/[;,:"]/.test(v) ? `${k}="${v}"` : `${k}=${v}`)).join(';');
      return `${p.name}:0x${p.keywords.toString(16)}:${p.level}${args ? `:${args}` : ''}`;
    })
    .join(',');
}
