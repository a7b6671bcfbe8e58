import { requireBuiltin } from './this-thread.js';

/**
 * How `run` ends a span when the native promise `fn` returned settles, without touching the promise.
 * Every JavaScript way to learn how a promise settled (then, await, Promise.race) attaches a reaction,
 * and a reaction marks a rejection as handled: the application's unhandled rejection would no longer
 * be reported, nor end the process. And a reaction that rethrows makes a new promise, whose rejection
 * is unhandled where the application handled its own. So the promise is watched from outside: V8's
 * settle hook says when, and V8's own state (read by the native addon) says how.
 */

/** Reads a native promise's state; the native addon's `promise_state` target. */
export interface PromiseStateReader {
  /** `pending` while the promise is pending, `fulfilled` once it is fulfilled, else the rejection's reason. */
  outcome(promise: Promise<unknown>, pending: unknown, fulfilled: unknown): unknown;
}

/** The span methods a settlement ends with. */
export interface SettlingSpan {
  finish(id: number, note: string): void;
  fail(id: number, error: unknown): void;
}

/**
 * The `errorName` of a normal end written when `fn` returned, before the promise it returned settled:
 * the span covers only `fn`'s synchronous part (no reader: the native addon was not built).
 */
export const UNWATCHED_PROMISE = 'unwatched-promise';

/** Loads the reader: installed by the host (src/providers/promise-state.ts) with the session machinery. */
let loadReader: (() => PromiseStateReader | undefined) | undefined;
/**
 * The reader (the native addon) and V8's promise hooks, loaded by the first span that waits on a
 * promise: node:v8 loads node:stream too (~2.5 ms, 28 of Node's modules), which neither the import
 * nor a session's start need pay.
 */
let watch: { readonly reader: PromiseStateReader; readonly promiseHooks: typeof import('node:v8').promiseHooks } | null | undefined;

export function usePromiseStateReader(load: () => PromiseStateReader | undefined): void {
  loadReader = load;
}

function watcher(): typeof watch {
  if (watch !== undefined || loadReader === undefined) return watch;
  const reader = loadReader();
  watch = reader === undefined ? null : { reader, promiseHooks: (requireBuiltin('node:v8') as typeof import('node:v8')).promiseHooks };
  return watch;
}

interface Waiter {
  readonly span: SettlingSpan;
  readonly id: number;
}

/** The spans waiting on each promise: one, or several when nested runs return the same promise. */
const waiting = new WeakMap<Promise<unknown>, Waiter | Waiter[]>();
const PENDING = Symbol('pending');
const FULFILLED = Symbol('fulfilled');

/**
 * V8's settle hook runs at every settlement in the thread (~60 ns each; BENCHMARKS.md §10), so it is
 * on only while spans wait on promises, and for a second after the last: turning it on and off costs
 * more than a span (Node re-installs every promise hook), so a steady flow of spans keeps it on.
 */
const QUIET_MS = 1000;
let waiters = 0;
/** Waits begun since the timer last looked. */
let recent = 0;
let stopHook: (() => void) | undefined;
let stopTimer: ReturnType<typeof setTimeout> | undefined;

function stopWhenQuiet(): void {
  if (waiters > 0 || recent > 0) {
    recent = 0;
    // Unref'd: it never keeps the process alive.
    stopTimer = setTimeout(stopWhenQuiet, QUIET_MS).unref();
    return;
  }
  stopTimer = undefined;
  stopHook?.();
  stopHook = undefined;
}

function end(w: Waiter, outcome: unknown): void {
  if (outcome === FULFILLED) w.span.finish(w.id, '');
  else w.span.fail(w.id, outcome);
}

function onSettled(promise: Promise<unknown>): void {
  const w = waiting.get(promise);
  if (w === undefined) return;
  waiting.delete(promise);
  // V8 calls the hook as the promise settles (not as it is resolved to another thenable, which it then
  // follows), just before it records the outcome: read it once this step is over, before any reaction
  // of the promise runs and before Node looks for unhandled rejections.
  queueMicrotask(() => {
    const outcome = watch!.reader.outcome(promise, PENDING, FULFILLED);
    const all = Array.isArray(w) ? w : [w];
    for (const one of all) end(one, outcome);
    waiters -= all.length;
  });
}

/** Ends span `id` when `promise` settles: an error end if it is rejected. Attaches nothing to it. */
export function endWhenSettled(promise: Promise<unknown>, span: SettlingSpan, id: number): void {
  const watching = watcher();
  if (!watching) return span.finish(id, UNWATCHED_PROMISE);
  const w: Waiter = { span, id };
  const now = watching.reader.outcome(promise, PENDING, FULFILLED);
  if (now !== PENDING) return end(w, now);
  const before = waiting.get(promise);
  if (before === undefined) waiting.set(promise, w);
  else if (Array.isArray(before)) before.push(w);
  else waiting.set(promise, [before, w]);
  waiters++;
  recent++;
  stopHook ??= watching.promiseHooks.onSettled(onSettled) as () => void;
  stopTimer ??= setTimeout(stopWhenQuiet, QUIET_MS).unref();
}
