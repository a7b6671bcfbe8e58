import type { EnableContext } from '../schema/provider.js';

/**
 * The sessions that enabled one built-in provider on this thread. An event is written once and
 * reaches every session that wants it, so a provider runs one set of observers and timers for all of
 * them: `apply` hears the whole set after each change and (re)configures, or stops when it is empty.
 * (A provider defined while sessions run gets its onEnable after defineProvider returns, so `apply`
 * may use the provider's own binding.)
 */
export class ProviderSessions {
  private readonly active = new Map<number, EnableContext>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly providerName: string,
    private readonly apply: (sessions: ProviderSessions) => void,
  ) {}

  get size(): number {
    return this.active.size;
  }

  readonly onEnable = (ctx: EnableContext): void => {
    this.active.set(ctx.sessionId, ctx);
    this.apply(this);
  };

  readonly onDisable = (ctx: EnableContext): void => {
    if (!this.active.delete(ctx.sessionId)) return;
    this.apply(this);
  };

  /**
   * The smallest value any session asked for with `key=value` (finer wins), or `fallback`. A value
   * that is not a number in [min, max] is reported once as a warning and ignored: a typo in a
   * provider spec must not stop the traced application.
   */
  smallestNumber(key: string, fallback: number, min: number, max: number): number {
    const values = this.numbers(key, min, max);
    return values.length === 0 ? fallback : Math.min(...values);
  }

  /**
   * The largest value any session asked for with `key=value` (a session that asks for more gets it),
   * `unsaid` standing for the text of a session that did not say; `fallback` when none did. Bad values
   * as smallestNumber.
   */
  largestNumber(key: string, fallback: number, min: number, max: number, unsaid?: string): number {
    const values = this.numbers(key, min, max, unsaid);
    return values.length === 0 ? fallback : Math.max(...values);
  }

  /**
   * Whether some session did not ask for `key=value`: a mode every session must choose to get. A
   * value not in `allowed` is reported once as a warning and counts as not asking.
   */
  notAllSay(key: string, value: string, allowed: readonly string[]): boolean {
    let all = true;
    for (const ctx of this.active.values()) if (this.choice(ctx, key, allowed) !== value) all = false;
    return !all;
  }

  /** Whether some session asked for `key=value`: a mode any one session turns on. Bad values as notAllSay. */
  someSays(key: string, value: string, allowed: readonly string[]): boolean {
    let some = false;
    for (const ctx of this.active.values()) if (this.choice(ctx, key, allowed) === value) some = true;
    return some;
  }

  /** What a session chose for `key`, one of `allowed`, or undefined (a value not allowed is reported once). */
  private choice(ctx: EnableContext, key: string, allowed: readonly string[]): string | undefined {
    const text = ctx.arguments[key];
    if (text === undefined || allowed.includes(text)) return text;
    this.warnOnce(ctx, key, `${key}=${JSON.stringify(text)} is not one of ${allowed.join(', ')}; ignoring it`);
    return undefined;
  }

  private warnOnce(ctx: EnableContext, key: string, what: string): void {
    const warning = `${ctx.sessionId}:${key}`;
    if (!this.warned.has(warning)) process.emitWarning(`tracepipe: ${this.providerName} argument ${what}`);
    this.warned.add(warning);
  }

  private numbers(key: string, min: number, max: number, unsaid?: string): number[] {
    const values: number[] = [];
    for (const ctx of this.active.values()) {
      const text = ctx.arguments[key] ?? unsaid;
      if (text === undefined) continue;
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
        this.warnOnce(ctx, key, `${key}=${JSON.stringify(text)} is not a number in [${min}, ${max}]; ignoring it`);
        continue;
      }
      values.push(n);
    }
    return values;
  }

  /** Every item any session listed in `key=a,b,...` (a list argument: sessions' lists add up). */
  listed(key: string): Set<string> {
    const items = new Set<string>();
    for (const ctx of this.active.values()) {
      for (const item of (ctx.arguments[key] ?? '').split(',')) if (item.trim() !== '') items.add(item.trim());
    }
    return items;
  }
}
