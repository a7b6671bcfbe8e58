import { requireBuiltin } from '../schema/this-thread.js';
import { currentSpanId, spanStore } from '../schema/span-context.js';
import type { TraceSpanType } from '../schema/span-type.js';
const { tracingChannel } = requireBuiltin('node:diagnostics_channel') as typeof import('node:diagnostics_channel');

/** The span one TracingChannel operation's messages share; its context object carries `result` or `error` once it ends. */
interface OperationContext {
  result?: unknown;
  error?: unknown;
}

/** Only the messages that end a span are subscribed (Node subscribes what is given). */
type Handlers = Partial<Parameters<ReturnType<typeof tracingChannel>['subscribe']>[0]>;
type Span = Pick<TraceSpanType<readonly [readonly ['channel', 'string']], readonly []>, 'begin' | 'end' | 'fail'>;

interface Bridged {
  readonly channel: ReturnType<typeof tracingChannel>;
  readonly handlers: Handlers;
}

/**
 * Node's TracingChannels (`diagnostics_channel.tracingChannel(name)`: start, end, asyncStart,
 * asyncEnd, error), by name, as spans. The span begins in the start channel's bound store, so the
 * traced function runs with it current and spans it opens (in any library) are its children. It ends
 * at `end` when the operation finished synchronously (traceSync, or a throw), else at `asyncEnd`
 * (tracePromise, traceCallback); an operation whose context carries `error` ends as an error end.
 */
export class TracingChannelBridge {
  private readonly bridged = new Map<string, Bridged>();
  /** Operation context → its span; a WeakMap, so a library's (possibly frozen) context objects stay untouched. */
  private readonly spans = new WeakMap<object, number>();

  /** `span` is read when a channel is bridged: the provider that owns it may be defined after this bridge. */
  constructor(private readonly span: () => Span) {}

  /** Bridges exactly these channel names (none: bridges nothing, and Node skips publishing). */
  set(names: ReadonlySet<string>): void {
    for (const [name, b] of this.bridged) {
      if (names.has(name)) continue;
      b.channel.start.unbindStore(spanStore());
      b.channel.unsubscribe(b.handlers as Parameters<typeof b.channel.unsubscribe>[0]);
      this.bridged.delete(name);
    }
    for (const name of names) if (!this.bridged.has(name)) this.bridge(name);
  }

  private bridge(name: string): void {
    const channel = tracingChannel(name);
    const span = this.span();
    const finish = (ctx: object): void => {
      const id = this.spans.get(ctx);
      if (id === undefined) return;
      this.spans.delete(ctx);
      if ('error' in ctx) span.fail(id, (ctx as OperationContext).error);
      else span.end(id);
    };
    const handlers: Handlers = {
      end: (ctx) => {
        if ('result' in (ctx as object) || 'error' in (ctx as object)) finish(ctx as object);
      },
      asyncEnd: (ctx) => finish(ctx as object),
    };
    // The store transform runs before the start message, in the caller's context: the span's parent is
    // the caller's span; what it returns is current while the traced function runs.
    channel.start.bindStore(spanStore(), (ctx) => {
      const id = typeof ctx === 'object' && ctx !== null ? span.begin(name) : 0;
      if (id === 0) return currentSpanId();
      this.spans.set(ctx as object, id);
      return id;
    });
    channel.subscribe(handlers as Parameters<typeof channel.subscribe>[0]);
    this.bridged.set(name, { channel, handlers });
  }
}
