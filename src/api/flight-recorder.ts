import { requireBuiltin } from '../schema/this-thread.js';
import { parseBufferSizeMB, type RingCapacity } from '../buffers/session-memory.js';
import type { DumpResult } from '../session/drain-protocol.js';
import type { ProviderRequest } from '../session/provider-spec.js';
import { SessionError, type SessionResult, startSession, type TraceSession } from '../session/session.js';
import { threadSessions } from '../session/thread-sessions.js';
import { findProfile } from '../session/trace-profiles.js';
const { constants } = requireBuiltin('node:os') as typeof import('node:os');
const { join } = requireBuiltin('node:path') as typeof import('node:path');

export interface FlightRecorderOptions {
  /** Provider spec or list; default: the runtime providers at Informational (the 'default' profile). */
  readonly providers?: string | readonly ProviderRequest[];
  /** The ring's size; the newest events that fit are kept. Default 16. */
  readonly sizeMB?: number;
  /** Where automatic dumps go. Default: TRACEPIPE_FLIGHT_DIR, else the current working directory. */
  readonly dir?: string;
  /**
   * Dump when an uncaught exception (or an unhandled rejection) is about to end the process: when
   * nothing handles it (no 'uncaughtException' listener, no capture callback: a domain, the REPL,
   * `process.setUncaughtExceptionCaptureCallback`). Default true.
   */
  readonly dumpOnCrash?: boolean;
  /**
   * Dump when this signal arrives, instead of its default action (SIGUSR2's ends the process): the
   * process keeps running. While the application listens to the signal itself, the recorder leaves
   * it alone, for good (see README, "Flight recorder"). Default 'SIGUSR2'; false for none.
   */
  readonly signal?: NodeJS.Signals | false;
  /** Called after each automatic dump (crash or signal), with the file and what was written. */
  readonly onDump?: (path: string, result: DumpResult) => void;
}

export interface FlightDump extends DumpResult {
  readonly path: string;
}

export interface FlightRecorder {
  readonly session: TraceSession;
  readonly dir: string;
  /**
   * What the ring keeps when full, in events of a typical size (a 16-byte payload: 32 bytes each in
   * the ring, header included). A dump of them takes about a third of that on disk (docs/BUFFERING.md).
   */
  readonly capacity: RingCapacity;
  /** Writes the ring's newest events to `path` (default: a new `tracepipe-flight-<pid>-<time>.tptrace` in `dir`). */
  dump(path?: string): Promise<FlightDump>;
  /** Stops recording (nothing is written) and removes the crash and signal hooks. */
  stop(): Promise<SessionResult>;
}

/** How long a dying process waits for its dump. */
const CRASH_DUMP_TIMEOUT_MS = 5000;

/**
 * Signals that end a process and that supervisors use to end it: a dump signal listened to there
 * would keep the process alive (and the exit flush owns them, docs/IPC.md).
 */
const ENDING_SIGNALS: readonly string[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** A signal the process can listen to (SIGKILL and SIGSTOP cannot be caught) that does not end it by convention. */
function isCatchableSignal(name: unknown): name is NodeJS.Signals {
  return typeof name === 'string' && Object.hasOwn(constants.signals, name) && name !== 'SIGKILL' && name !== 'SIGSTOP' && !ENDING_SIGNALS.includes(name);
}

function stamp(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}T${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}${p(d.getUTCMilliseconds(), 3)}Z`;
}

/** `tracepipe-flight-<pid>-<UTC time>.tptrace` in `dir`. */
export function flightDumpPath(dir: string): string {
  return join(dir, `tracepipe-flight-${process.pid}-${stamp(new Date())}.tptrace`);
}

/**
 * An always-on ring session (seed 002's post-mortem buffers, LTTng's overwrite mode): producers never
 * park and never drop for want of room, the oldest events are overwritten, and nothing is written
 * until a dump: on request, on a signal, or as an uncaught exception ends the process (written
 * before it dies; the exception still prints and the exit code is Node's own).
 */
export async function startFlightRecorder(options: FlightRecorderOptions = {}): Promise<FlightRecorder> {
  if (!options || typeof options !== 'object') throw new SessionError('startFlightRecorder takes an options object');
  const dir = options.dir ?? (process.env.TRACEPIPE_FLIGHT_DIR || process.cwd());
  if (typeof dir !== 'string' || dir === '') throw new SessionError('dir must be a directory path');
  const signal = options.signal ?? 'SIGUSR2';
  if (signal !== false && !isCatchableSignal(signal)) throw new SessionError(`signal must be a catchable signal name such as 'SIGUSR2' (not SIGINT, SIGTERM or SIGHUP, which end the process), or false; not ${String(signal)}`);
  const dumpOnCrash = options.dumpOnCrash ?? true;
  if (typeof dumpOnCrash !== 'boolean') throw new SessionError('dumpOnCrash must be a boolean');
  const session = await startSession({
    providers: options.providers ?? findProfile('default')!.providers,
    bufferingMode: 'ring',
    bufferSizeMB: options.sizeMB ?? 16,
    keepProcessAlive: false,
  });
  const report = (path: string, r: DumpResult): void => {
    if (r.error) process.stderr.write(`tracepipe: flight recorder dump to ${path} failed: ${r.error}\n`);
    options.onDump?.(path, r);
  };

  // The monitor runs before Node decides, and changes nothing of it. Node ends the process only when
  // nothing handles the error: a capture callback (set by a domain with an 'error' listener, by the
  // REPL, or by the application) or an 'uncaughtException' listener takes it instead. What such a
  // handler then does (carry on, exit, throw again) cannot be known here: only the case where Node
  // itself ends the process is a crash. A fatal unhandled rejection arrives here the same way.
  const onCrash = (): void => {
    if (process.hasUncaughtExceptionCaptureCallback() || process.listenerCount('uncaughtException') > 0 || session.state !== 'running') return;
    const path = flightDumpPath(dir);
    // What providers hold back (CPU samples, GC pauses not yet written: the loop may not have turned for a while) goes in first.
    threadSessions.flushProviders();
    const r = session.dumpSync(path, CRASH_DUMP_TIMEOUT_MS, true);
    if (r === undefined) process.stderr.write(`tracepipe: flight recorder: the crash dump to ${path} did not finish within ${CRASH_DUMP_TIMEOUT_MS / 1000} s; the file may be incomplete\n`);
    else if (r.error) process.stderr.write(`tracepipe: flight recorder: the crash dump to ${path} failed: ${r.error}\n`);
    else process.stderr.write(`tracepipe: flight recorder: the last moments are in ${path}\n`);
    try {
      options.onDump?.(path, r ?? { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, error: `not finished within ${CRASH_DUMP_TIMEOUT_MS / 1000} s` });
    } catch {
      // A throw from here would change how the process dies (exit code 7): the exception it dies of is the application's.
    }
  };
  const onSignal = (): void => {
    const path = flightDumpPath(dir);
    // As for dump() and a crash: what providers hold back (CPU samples up to now) goes in first.
    threadSessions.flushProviders();
    session.dump(path, { newFile: true }).then((r) => report(path, r), (e: unknown) => report(path, { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, error: (e as Error).message }));
  };
  // A listener of the application's own for the signal means the application decides what it does
  // (a supervisor's restart, a graceful exit that removes its listener and raises the signal again):
  // the recorder then stops listening for it, for good, so the signal does what it would do untraced.
  const yieldSignal = (event: string | symbol): void => {
    if (event !== signal) return;
    process.off('newListener', yieldSignal);
    // Not before the application's listener is in place: with no listener at all for a moment, Node
    // would stop watching the signal, and the one being added would never hear it.
    process.nextTick(() => process.off(signal, onSignal));
  };
  if (dumpOnCrash) process.on('uncaughtExceptionMonitor', onCrash);
  if (signal && process.listenerCount(signal) === 0) {
    process.on(signal, onSignal);
    process.on('newListener', yieldSignal);
  }
  const unhook = (): void => {
    process.off('uncaughtExceptionMonitor', onCrash);
    if (signal) {
      process.off(signal, onSignal);
      process.off('newListener', yieldSignal);
    }
  };
  void session.done.then(unhook);

  return {
    session,
    dir,
    capacity: session.capacity,
    async dump(asked?: string) {
      // A name made up here is created exclusively: the directory may be shared, and a link planted at a guessed name is never followed.
      const path = asked ?? flightDumpPath(dir);
      threadSessions.flushProviders();
      const r = await session.dump(path, { newFile: asked === undefined });
      if (r.error) throw new SessionError(`flight recorder dump to ${path} failed: ${r.error}`);
      return { ...r, path };
    },
    stop() {
      unhook();
      return session.stop();
    },
  };
}

/**
 * `TRACEPIPE_FLIGHT_RECORDER=<MiB>` read by `tracepipe/register`: a recorder without code changes,
 * with `TRACEPIPE_FLIGHT_PROVIDERS` (default: the runtime providers at Informational),
 * `TRACEPIPE_FLIGHT_DIR` and `TRACEPIPE_FLIGHT_SIGNAL` (a signal name, or `off`; default SIGUSR2).
 * Undefined when the variable is unset, empty or 0.
 */
export async function startFlightRecorderFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<FlightRecorder | undefined> {
  const size = env.TRACEPIPE_FLIGHT_RECORDER?.trim();
  if (size === undefined || size === '' || size === '0') return undefined;
  const sizeMB = parseBufferSizeMB(size);
  if (sizeMB === undefined) throw new SessionError(`TRACEPIPE_FLIGHT_RECORDER must be the ring's size in MiB (e.g. 16), not '${size}'`);
  const signalSetting = env.TRACEPIPE_FLIGHT_SIGNAL?.trim();
  let signal: NodeJS.Signals | false | undefined;
  if (signalSetting === 'off') signal = false;
  else if (isCatchableSignal(signalSetting)) signal = signalSetting;
  else if (signalSetting !== undefined && signalSetting !== '') throw new SessionError(`TRACEPIPE_FLIGHT_SIGNAL must be a catchable signal name such as SIGUSR2 (not SIGINT, SIGTERM or SIGHUP, which end the process), or 'off'; not '${signalSetting}'`);
  return startFlightRecorder({
    sizeMB,
    ...(env.TRACEPIPE_FLIGHT_PROVIDERS ? { providers: env.TRACEPIPE_FLIGHT_PROVIDERS } : {}),
    ...(signal === undefined ? {} : { signal }),
  });
}
