import { idHex, OtlpIds } from '../otlp/otlp-ids.js';
import { currentSpanId, SAMPLED_OUT } from '../schema/span-context.js';
import { requireBuiltin, isMainThread as onMainThread } from '../schema/this-thread.js';
import { processIdSeed } from '../session/id-seed.js';
const { AsyncLocalStorage } = requireBuiltin('node:async_hooks') as typeof import('node:async_hooks');
const isMainThread = onMainThread();

/** What a caller's `traceparent` and `tracestate` headers said (W3C Trace Context, level 1). */
export interface IncomingContext {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** The caller's span: 16 lowercase hex digits. */
  readonly parentId: string;
  readonly flags: number;
  /** The `tracestate` header as it came ('' without one), passed on unread. */
  readonly traceState: string;
}

// version-traceid-parentid-flags; a later version may append fields after a '-' (W3C §3.2.4).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** W3C asks a vendor to pass on at least 512 characters of tracestate; a longer one is not passed on. */
const MAX_TRACESTATE = 512;

/**
 * A `traceparent` header read as W3C says: anything malformed (wrong length, version ff, an all-zero
 * id, upper-case or other non-hex digits, several headers joined) is ignored, and the request is a
 * root, as if it had none.
 */
export function parseTraceparent(traceparent: string, tracestate: string | string[] | undefined): IncomingContext | undefined {
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return undefined;
  const [, version, traceId, parentId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || (version === '00' && traceparent.length !== 55)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  const state = Array.isArray(tracestate) ? tracestate.join(',') : (tracestate ?? '');
  return { traceId, parentId, flags: parseInt(flags, 16), traceState: state.length <= MAX_TRACESTATE ? state : '' };
}

/**
 * The trace a served request belongs to, current in everything it does (propagate=w3c only): the
 * caller's context when it sent one, else the request's own span, the root of its trace here.
 */
interface TraceRoot {
  /** The served request's span, the root of its trace here (SAMPLED_OUT: left out; 0: not known). */
  readonly rootSpan: number;
  readonly incoming: IncomingContext | undefined;
  /** A request head sampling left out, begun here: the trace id all its outgoing requests send, drawn at the first. */
  untracedId?: string;
}
const roots = new AsyncLocalStorage<TraceRoot>();

/** Makes `root` the trace of what the request being served does (next to its span: enterSpan). */
export function enterTrace(rootSpan: number, incoming: IncomingContext | undefined): void {
  roots.enterWith({ rootSpan, incoming });
}

let ids: OtlpIds | undefined;

/**
 * `bytes` random bytes in hex, for a request head sampling left out. node:crypto loads on the first:
 * imported as an ES module with the provider it would read every export, whose lazy ones load Web
 * Crypto, before any request is sampled out.
 */
function randomHex(bytes: number): string {
  return (requireBuiltin('node:crypto') as typeof import('node:crypto')).randomBytes(bytes).toString('hex');
}

/**
 * The `traceparent` (and `tracestate`) an outgoing request made here carries: the trace the OTLP
 * export gives its client span (`client`, the span the callee's server span becomes the child of),
 * derived from the process's id seed as otlp-ids.ts derives the file's. A request left out by head
 * sampling sends its trace with flag 00 and a fresh span id. Undefined where no trace is known: no
 * client span (spans off), under a span whose tree no served request began (its root is not known
 * here), or on a worker thread.
 */
export function outgoingContext(client: number): { traceparent: string; tracestate: string } | undefined {
  const current = currentSpanId();
  const root = roots.getStore();
  if (current === SAMPLED_OUT) {
    let traceId = root?.incoming?.traceId;
    if (traceId === undefined && root !== undefined) traceId = root.untracedId ??= randomHex(16);
    return { traceparent: `00-${traceId ?? randomHex(16)}-${randomHex(8)}-00`, tracestate: root?.incoming?.traceState ?? '' };
  }
  // The id seed is the main thread's (the session's header holds it); a worker's copy of this module would draw its own.
  if (client <= 0 || !isMainThread) return undefined;
  ids ??= new OtlpIds(processIdSeed());
  let traceId: string;
  if (current === 0) traceId = idHex(ids.traceId(client));
  else if (root === undefined || (root.rootSpan <= 0 && root.incoming === undefined)) return undefined;
  else traceId = root.incoming?.traceId ?? idHex(ids.traceId(root.rootSpan));
  return { traceparent: `00-${traceId}-${idHex(ids.spanId(client))}-01`, tracestate: current === 0 ? '' : (root?.incoming?.traceState ?? '') };
}
