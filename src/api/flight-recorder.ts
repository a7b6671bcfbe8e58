import { join } from 'node:path';
import { parseBufferSizeMB } from '../buffers/session-memory.js';
import type { DumpResult } from '../session/drain-protocol.js';
import type { ProviderRequest } from '../session/provider-spec.js';
import { SessionError, type SessionResult, startSession, type TraceSession } from '../session/session.js';
import { findProfile } from '../session/trace-profiles.js';

export interface FlightRecorderOptions {
  /** Provider spec or list; default: the runtime providers at Informational (the 'default' profile). */
  readonly providers?: string | readonly ProviderRequest[];
  /** The ring's size; the newest events that fit are kept. Default 16. */
  readonly sizeMB?: number;
  /** Where automatic dumps go. Default: TRACEPIPE_FLIGHT_DIR, else the current working directory. */
  readonly dir?: string;
  /** Dump when an uncaught exception (or an unhandled rejection) is about to end the process. Default true. */
  readonly dumpOnCrash?: boolean;
  /** Dump when this signal arrives; the process keeps running. Default 'SIGUSR2'; false for none. */
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
  /** Writes the ring's newest events to `path` (default: a new `tracepipe-flight-<pid>-<time>.tptrace` in `dir`). */
  dump(path?: string): Promise<FlightDump>;
  /** Stops recording (nothing is written) and removes the crash and signal hooks. */
  stop(): Promise<SessionResult>;
}

/** How long a dying process waits for its dump. */
const CRASH_DUMP_TIMEOUT_MS = 5000;

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
  if (signal !== false && (typeof signal !== 'string' || !/^SIG[A-Z0-9]+$/.test(signal) || signal === 'SIGKILL' || signal === 'SIGSTOP')) {
    throw new SessionError(`signal must be a catchable signal name such as 'SIGUSR2', or false; not ${String(signal)}`);
  }
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

  // The monitor runs before Node's own handling and changes none of it. An uncaught exception ends
  // the process unless the application listens for one; a fatal unhandled rejection arrives here too.
  const onCrash = (): void => {
    if (process.listenerCount('uncaughtException') > 0 || session.state !== 'running') return;
    const path = flightDumpPath(dir);
    const done = session.dumpSync(path, CRASH_DUMP_TIMEOUT_MS);
    process.stderr.write(done ? `tracepipe: flight recorder: the last moments are in ${path}\n` : `tracepipe: flight recorder: the dump to ${path} did not finish in time\n`);
  };
  const onSignal = (): void => {
    const path = flightDumpPath(dir);
    session.dump(path).then((r) => report(path, r), (e: unknown) => report(path, { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, error: (e as Error).message }));
  };
  if (dumpOnCrash) process.on('uncaughtExceptionMonitor', onCrash);
  if (signal) process.on(signal, onSignal);
  const unhook = (): void => {
    process.off('uncaughtExceptionMonitor', onCrash);
    if (signal) process.off(signal, onSignal);
  };
  void session.done.then(unhook);

  return {
    session,
    dir,
    async dump(path = flightDumpPath(dir)) {
      const r = await session.dump(path);
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
 * with `TRACEPIPE_FLIGHT_PROVIDERS` (default: the runtime providers at Informational) and
 * `TRACEPIPE_FLIGHT_DIR`. Undefined when the variable is unset, empty or 0.
 */
export async function startFlightRecorderFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<FlightRecorder | undefined> {
  const size = env.TRACEPIPE_FLIGHT_RECORDER?.trim();
  if (size === undefined || size === '' || size === '0') return undefined;
  const sizeMB = parseBufferSizeMB(size);
  if (sizeMB === undefined) throw new SessionError(`TRACEPIPE_FLIGHT_RECORDER must be the ring's size in MiB (e.g. 16), not '${size}'`);
  return startFlightRecorder({ sizeMB, ...(env.TRACEPIPE_FLIGHT_PROVIDERS ? { providers: env.TRACEPIPE_FLIGHT_PROVIDERS } : {}) });
}
