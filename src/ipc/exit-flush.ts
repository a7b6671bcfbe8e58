/**
 * Termination signals end a process without its 'exit' event, so a session's file would lose its
 * end-of-stream block. While sessions started from outside the application are running, SIGINT,
 * SIGTERM and SIGHUP flush them and then die of the same signal, as if nothing had been listening.
 * Normal ends, process.exit() and uncaught exceptions all emit 'exit', where sessions flush already.
 */
import type { TraceSession } from '../session/session.js';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

let holds = 0;
/** The thread's sessions, as the holders know them (passed in: the diagnostics server loads them lazily). */
let sessions: () => readonly TraceSession[] = () => [];
const cleanups = new Set<() => void>();

function onSignal(signal: NodeJS.Signals): void {
  // The application listens too: it decides whether to exit, and an exit goes through 'exit'.
  if (process.listenerCount(signal) > 1) return;
  for (const c of cleanups) c();
  holds = 0;
  for (const sig of SIGNALS) process.off(sig, onSignal);
  // The flush comes last: whatever runs after it is after the session, and may collect garbage.
  for (const s of sessions()) s.flushOnExit();
  // With no listener left the default action applies again: the exit status says which signal it was.
  process.kill(process.pid, signal);
}

/**
 * Keeps the signal handlers installed until the returned release is called (they are not installed
 * while nothing needs them: a JavaScript signal listener cannot interrupt a busy event loop, the
 * default action can). `liveSessions` is the sessions module's, which the holder has loaded.
 */
export function holdSignalFlush(liveSessions: () => readonly TraceSession[]): () => void {
  sessions = liveSessions;
  if (holds++ === 0) for (const sig of SIGNALS) process.on(sig, onSignal);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holds === 0) for (const sig of SIGNALS) process.off(sig, onSignal);
  };
}

/** Also run `cleanup` when a signal ends the process (what an 'exit' listener would have done). */
export function onSignalExit(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}
