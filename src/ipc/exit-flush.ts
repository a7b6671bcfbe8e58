/**
 * Termination signals end a process without its 'exit' event, so a session's stream would lose its
 * last events and its end. While sessions started from outside the application run (a startup
 * session, a tool attached), SIGINT, SIGTERM and SIGHUP end every session's stream before the process
 * dies of them, through a native signal handler (native/gc-hook/signal_flush.cc), never a JavaScript
 * listener. A listener changes what the signal does: the process no longer dies while its loop is
 * blocked, a signal pending as the program ends is lost (exit status 0 instead of 143), and
 * signal-exit, which re-raises only when its own listeners are the only ones, waits for us while we
 * wait for it. The native handler is invisible to JavaScript. It rings the main thread: if the loop
 * turns within 100 ms, the flush runs here as at 'exit' (providers write their last events); if not
 * (a blocked loop), or if the process signalled itself (the code after process.kill must not run),
 * the streams end from shared memory. Then the signal goes back to what was there before and is
 * raised again: the process dies of it, with the same status as untraced.
 *
 * When the application listens to a signal itself, libuv's handler takes it over and the application
 * decides (an exit it chooses goes through 'exit', where sessions flush already); when its last
 * listener goes, the native handler comes back. Without the native addon nothing is installed: a
 * signal kills the process exactly as untraced, and the stream ends at the drain's last pass, readable
 * without its end-of-stream block (docs/IPC.md).
 */
import { Ctl, SessionState } from '../buffers/session-memory.js';
import { loadNativeAddon } from '../session/native-addon.js';
import { onProcessExit } from '../session/process-exit.js';
import type { SessionWatcher, TraceSession } from '../session/session.js';
import { requireBuiltin } from '../schema/this-thread.js';
const { constants } = requireBuiltin('node:os') as typeof import('node:os');

/** What the flush needs of the sessions module, which the holder has loaded. */
export interface SessionsForSignals {
  watchSessions(watcher: SessionWatcher): () => void;
  flushSessionsOnExit(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

interface SignalFlushAddon {
  configure(state: number, exiting: number, wake: number, enabled: number, stopping: number): void;
  /** Rings `onSignal` on this thread when a signal arrives while its loop turns (once per process). */
  start(onSignal: () => void): void;
  /** The signal that arrived, if this thread takes it before the native fallback does; 0 otherwise. */
  claim(): number;
  /** Gives the signal back to its previous action and raises it: the process dies of it. */
  die(signal: number): void;
  /** The loop has ended: a signal that arrived is taken now, later ones at once. */
  exiting(): void;
  /** Returns the session's slot, -1 when the table is full. */
  track(sab: SharedArrayBuffer): number;
  untrack(slot: number): void;
  /** Whether the handler is now in place (false where the signal is ignored). */
  install(signo: number): boolean;
  uninstall(signo: number): void;
  unlinkOnSignal(path: string): number;
  keepOnSignal(slot: number): void;
}

let native: SignalFlushAddon | null | undefined;

/** Loaded with the first hold: the diagnostics server alone needs none of this. */
function signalFlushAddon(): SignalFlushAddon | undefined {
  if (native === undefined) {
    native = loadNativeAddon<SignalFlushAddon>('signal_flush').addon ?? null;
    native?.configure(Ctl.State, Ctl.Exiting, Ctl.DrainWake, SessionState.Enabled, SessionState.Stopping);
  }
  return native ?? undefined;
}

let holds = 0;
const tracked = new Map<TraceSession, number>();
/** Files to remove as a signal kills the process, and their slots in the addon while held. */
const endpoints = new Map<string, number>();
let stopWatching: (() => void) | undefined;
let forgetExit: () => void = () => undefined;

function isHandled(event: string | symbol): event is NodeJS.Signals {
  return (SIGNALS as readonly (string | symbol)[]).includes(event);
}

/** The native handler goes where the default action would apply: no JavaScript listener. */
function installIfUnheard(addon: SignalFlushAddon, signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) === 0) addon.install(constants.signals[signal]);
}

/** libuv gives a signal back to the default action when its last listener goes: the handler returns. */
function onRemoveListener(event: string | symbol): void {
  const addon = native;
  if (addon && holds > 0 && isHandled(event)) installIfUnheard(addon, event);
}

function track(addon: SignalFlushAddon): SessionWatcher {
  return (session, live) => {
    if (live && session.drainWritesOutput) {
      const slot = addon.track(session.memory.sab);
      if (slot < 0) return;
      tracked.set(session, slot);
      Atomics.store(session.memory.i32, Ctl.SignalFlush, 1);
      // A drain asleep for longer than its idle wait goes back to sleep with the shorter bound.
      session.memory.wakeDrain();
    } else if (!live && tracked.has(session)) {
      addon.untrack(tracked.get(session)!);
      tracked.delete(session);
      Atomics.store(session.memory.i32, Ctl.SignalFlush, 0);
    }
  };
}

let flushSessions: () => void = () => undefined;

/** The signal arrived and this thread takes it: flush as at 'exit', then die of it. */
function takeSignal(addon: SignalFlushAddon): void {
  const signal = addon.claim();
  if (signal === 0) return;
  try {
    flushSessions();
  } finally {
    addon.die(signal);
  }
}

/**
 * A signal that arrived as the process exits (its loop never turned again) still ends it, and one that
 * arrives from now on is taken at once: the loop will not turn to take it.
 */
function onExit(): void {
  if (!native) return;
  takeSignal(native);
  native.exiting();
}

function start(addon: SignalFlushAddon, sessions: SessionsForSignals): void {
  flushSessions = sessions.flushSessionsOnExit;
  addon.start(() => takeSignal(addon));
  stopWatching = sessions.watchSessions(track(addon));
  for (const path of endpoints.keys()) endpoints.set(path, addon.unlinkOnSignal(path));
  for (const sig of SIGNALS) installIfUnheard(addon, sig);
  process.on('removeListener', onRemoveListener);
  forgetExit = onProcessExit(onExit);
}

function finish(addon: SignalFlushAddon): void {
  process.off('removeListener', onRemoveListener);
  forgetExit();
  for (const sig of SIGNALS) addon.uninstall(constants.signals[sig]);
  stopWatching?.();
  stopWatching = undefined;
  for (const [session, slot] of tracked) {
    addon.untrack(slot);
    Atomics.store(session.memory.i32, Ctl.SignalFlush, 0);
  }
  tracked.clear();
  for (const [path, slot] of endpoints) {
    addon.keepOnSignal(slot);
    endpoints.set(path, -1);
  }
}

/** Keeps the signal flush in place until the returned release is called: every session live meanwhile is flushed. */
export function holdSignalFlush(sessions: SessionsForSignals): () => void {
  const addon = signalFlushAddon();
  if (addon && holds++ === 0) start(addon, sessions);
  let released = false;
  return () => {
    if (released || !addon) return;
    released = true;
    if (--holds === 0) finish(addon);
  };
}

/** Also remove `path` when a signal ends the process while the flush is held (what an 'exit' listener does otherwise). */
export function removeOnSignalExit(path: string): () => void {
  endpoints.set(path, native && holds > 0 ? native.unlinkOnSignal(path) : -1);
  return () => {
    const slot = endpoints.get(path);
    if (slot !== undefined && slot >= 0) native?.keepOnSignal(slot);
    endpoints.delete(path);
  };
}
