import type { AsyncLocalStorage } from 'node:async_hooks';
import { requireBuiltin, threadId } from './this-thread.js';

const { AsyncLocalStorage: Store } = requireBuiltin('node:async_hooks') as typeof import('node:async_hooks');

/**
 * This thread's current span: the one whose `run` is on the stack, or whose `run` started the async
 * work (await, timers, callbacks) now running. One store per thread, shared by every provider, other
 * copies of tracepipe and tracepipe/lite (they reach it through the host), so a span in one library
 * is the parent of spans in another.
 *
 * Node keeps the store only once something has run in it: until a span runs with tracing on,
 * reading it is a property check and nothing tracks async work.
 */
const storage = new Store<number>();

/**
 * Current where a sampled-out request runs (head sampling): spans begun under it record nothing, so
 * a request's tree is kept or dropped whole.
 */
export const SAMPLED_OUT = -1;

/**
 * The span current in the synchronous run of a handler (enterSpanSynchronously), for what no
 * AsyncLocalStorage run or enterWith made current: the cheap mode that keeps no context across await.
 */
let synchronousSpan = 0;
const leaveSynchronousSpan = (): void => {
  synchronousSpan = 0;
};
/**
 * The leave is queued as a microtask the way an await resumes, as a reaction to a settled promise:
 * Node's queueMicrotask would build an AsyncResource and a bound function each call (BENCHMARKS.md
 * §6, issue 29). Both join the same queue, in the same order.
 */
const settled = Promise.resolve();

/** The current span's id, 0 when there is none, SAMPLED_OUT under a request sampling left out. */
export function currentSpanId(): number {
  return storage.getStore() ?? synchronousSpan;
}

/** Runs `fn` with span `id` current, for everything it does, synchronously or later. */
export function runInSpan<R>(id: number, fn: () => R): R {
  return storage.run(id, fn);
}

/**
 * Makes span `id` current for the rest of this synchronous execution and what it schedules: for a
 * span that starts in a diagnostics_channel message, just before Node calls the application's code.
 */
export function enterSpan(id: number): void {
  storage.enterWith(id);
}

/**
 * Makes span `id` current for the rest of this synchronous execution only: until the microtasks that
 * follow it, before any await resumes. Nothing tracks async work for it, so on Node 20 and 22 it does
 * not turn on async hooks as enterSpan does.
 */
export function enterSpanSynchronously(id: number): void {
  // One leave per span entered: none to enter "no span" where there is none.
  if (synchronousSpan === 0 && id !== 0) void settled.then(leaveSynchronousSpan);
  synchronousSpan = id;
}

/** The store itself, for diagnostics_channel's bindStore (a TracingChannel's function runs inside its span). */
export function spanStore(): AsyncLocalStorage<number> {
  return storage;
}

/**
 * Span ids are unique in a process and exact as JavaScript numbers (below 2^53): the thread's id
 * (modulo 2^17) above a per-thread count of 36 bits, which wraps after 68.7 billion spans. 0 is
 * never an id: it means "no span".
 */
const COUNT_LIMIT = 2 ** 36;
// Known at the first span: which thread this is costs a look at /proc (or worker_threads) the import need not pay.
let threadBase = -1;
let count = 0;

export function nextSpanId(): number {
  if (threadBase < 0) threadBase = (threadId() % 2 ** 17) * COUNT_LIMIT;
  count = count + 1 < COUNT_LIMIT ? count + 1 : 1;
  return threadBase + count;
}
