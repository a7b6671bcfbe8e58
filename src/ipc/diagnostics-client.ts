/**
 * The tool's side of the diagnostics protocol: find a target process, ask it something, read the answer.
 * Errors a user can act on (no such process, not attachable, refused) are TargetErrors with one-line messages.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { type CollectRequest, decodeProcessInfo, decodeSessionId, decodeStopResult, encodeCollectRequest, encodeSessionId, type ProcessInfo, type StopResult } from './ipc-commands.js';
import { CommandSet, encodeFrame, FrameReader, IpcError, MAX_REPLY_PAYLOAD, ProcessCommand, replyPayload, TracingCommand } from './ipc-protocol.js';
import { connectEndpoint, type Endpoint, listEndpoints, removeEndpoint } from './ipc-transport.js';
import { TargetError } from './target-error.js';

const CONNECT_TIMEOUT_MS = 3000;
const INFO_TIMEOUT_MS = 5000;
/** Starting a session spins up its drain thread; a busy target may take a while. */
const COLLECT_TIMEOUT_MS = 15000;
/** Stopping waits for the session's last flush. */
const STOP_TIMEOUT_MS = 30000;

export { TargetError };

/** Alive and not a zombie (a process that exited but was not reaped yet still answers kill 0). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return statFields(pid)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** The fields of /proc/<pid>/stat after the command name, which is in parentheses and may hold anything, ')' and spaces included: [0] is field 3, the state. */
function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function isStale(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ECONNREFUSED' || code === 'ENOENT';
}

/**
 * How long after its start a process without an endpoint is waited for: tracepipe/register opens the
 * endpoint 100 ms after it loads, and a process takes a while to load it, so a tool started right after
 * its target (`node --import tracepipe/register app.js & tracepipe collect --pid $!`) would otherwise be
 * told the target is not attachable.
 */
const YOUNG_PROCESS_MS = 3000;
const YOUNG_POLL_MS = 50;
/** How far below zero a process's age may come out and still be taken as new (see processAgeMs). */
const AGE_SLACK_MS = 1000;

/**
 * How long ago `pid` started, in ms, or undefined where that cannot be told (no /proc). Measured against
 * this process's own start (field 22 of both stat files, clock ticks since boot, the same clock): a
 * container's /proc/uptime may count from the container's start while start times count from the host's.
 */
function processAgeMs(pid: number): number | undefined {
  try {
    // Linux reports start times in USER_HZ, 100 a second on every architecture Node runs on.
    const age = process.uptime() * 1000 + (Number(statFields('self')[19]) - Number(statFields(pid)[19])) * 10;
    // process.uptime() counts from when Node started, a little after the process did, and start times
    // come in 10 ms steps: a target just spawned can come out a few ms "younger than new".
    if (!Number.isFinite(age) || age < -AGE_SLACK_MS) return undefined;
    return Math.max(0, age);
  } catch {
    return undefined;
  }
}

/** Connects to `pid`'s diagnostics server, removing endpoints nobody listens on any more. */
async function connectTarget(pid: number): Promise<net.Socket> {
  let deadline: number | undefined;
  for (;;) {
    for (const e of listEndpoints().filter((x) => x.pid === pid)) {
      try {
        return await connectEndpoint(e.path, CONNECT_TIMEOUT_MS);
      } catch (err) {
        if (!isStale(err)) throw new TargetError(`cannot connect to process ${pid}: ${(err as Error).message}`);
        removeEndpoint(e.path);
      }
    }
    if (!isProcessAlive(pid)) throw new TargetError(`no process with pid ${pid}`);
    const age = processAgeMs(pid);
    // Bounded here too: however the age was read, the wait ends YOUNG_PROCESS_MS after it began.
    deadline ??= performance.now() + YOUNG_PROCESS_MS;
    const left = Math.min(YOUNG_PROCESS_MS - (age ?? YOUNG_PROCESS_MS), deadline - performance.now());
    if (left <= 0) throw new TargetError(`process ${pid} is not attachable: start it with 'node --import tracepipe/register' or 'node --require tracepipe/register' (or put that in NODE_OPTIONS)`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(YOUNG_POLL_MS, left)));
  }
}

/** Sends one request and reads its reply frame; bytes after the reply stay unread on the socket. */
function exchange(socket: net.Socket, request: Uint8Array, timeoutMs: number, what: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const reader = new FrameReader(MAX_REPLY_PAYLOAD);
    const done = (err: Error | undefined, payload?: Uint8Array): void => {
      clearTimeout(timer);
      socket.off('data', onData).off('end', onEnd).off('error', onError);
      socket.pause();
      if (err) {
        socket.destroy();
        return reject(err);
      }
      // Only once paused and unheard: a flowing socket would emit the unshifted bytes right back.
      if (reader.remainder.length > 0) socket.unshift(reader.remainder);
      resolve(payload!);
    };
    const onData = (chunk: Buffer): void => {
      try {
        const frame = reader.push(chunk);
        if (!frame) return;
        done(undefined, replyPayload(frame));
      } catch (e) {
        done(e as Error);
      }
    };
    const onEnd = (): void => done(new TargetError(`the target closed the connection before answering ${what}`));
    const onError = (e: Error): void => done(new TargetError(`connection to the target failed during ${what}: ${e.message}`));
    const timer = setTimeout(() => done(new TargetError(`the target did not answer ${what} within ${timeoutMs / 1000} s`)), timeoutMs);
    socket.on('data', onData).on('end', onEnd).on('error', onError);
    socket.write(request);
  });
}

/** The target's error replies become TargetErrors that say what it said. */
function refusal(e: unknown, what: string): unknown {
  return e instanceof IpcError ? new TargetError(`the target refused ${what}: ${e.message}`) : e;
}

/** One request, one reply, then the connection closes. */
async function ask<T>(socket: net.Socket, request: Uint8Array, timeoutMs: number, what: string, decode: (payload: Uint8Array) => T): Promise<T> {
  try {
    return decode(await exchange(socket, request, timeoutMs, what));
  } catch (e) {
    throw refusal(e, what);
  } finally {
    socket.destroy();
  }
}

const PROCESS_INFO = encodeFrame(CommandSet.Process, ProcessCommand.ProcessInfo);

export async function processInfo(pid: number): Promise<ProcessInfo> {
  return ask(await connectTarget(pid), PROCESS_INFO, INFO_TIMEOUT_MS, 'ProcessInfo', decodeProcessInfo);
}

export async function stopTracing(pid: number, sessionId: number): Promise<StopResult> {
  const request = encodeFrame(CommandSet.Tracing, TracingCommand.StopTracing, encodeSessionId(sessionId));
  return ask(await connectTarget(pid), request, STOP_TIMEOUT_MS, 'StopTracing', decodeStopResult);
}

/** A session streaming from the target: iterate for the .tptrace bytes; the stream ends when the session does. */
export interface TraceStream extends AsyncIterable<Uint8Array> {
  readonly sessionId: number;
  /** Closes the connection, which ends the session in the target. */
  close(): void;
}

/** Sends a request whose reply is a session id followed by a .tptrace stream, and hands over the stream. */
async function openStream(pid: number, frame: Uint8Array, what: string): Promise<TraceStream> {
  const socket = await connectTarget(pid);
  let sessionId: number;
  try {
    sessionId = decodeSessionId(await exchange(socket, frame, COLLECT_TIMEOUT_MS, what), `${what} reply`);
  } catch (e) {
    socket.destroy();
    throw refusal(e, what);
  }
  return {
    sessionId,
    [Symbol.asyncIterator]: () => socket[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>,
    close: () => socket.destroy(),
  };
}

export function collectTracing(pid: number, request: CollectRequest): Promise<TraceStream> {
  return openStream(pid, encodeFrame(CommandSet.Tracing, TracingCommand.CollectTracing, encodeCollectRequest(request)), 'CollectTracing');
}

/** The target's flight recorder (ring session `sessionId`, 0 for its only one) dumped: iterate for the .tptrace bytes. */
export function dumpRecorder(pid: number, sessionId = 0): Promise<TraceStream> {
  return openStream(pid, encodeFrame(CommandSet.Tracing, TracingCommand.DumpRecorder, encodeSessionId(sessionId)), 'DumpRecorder');
}

export interface TargetListing {
  readonly endpoint: Endpoint;
  readonly info?: ProcessInfo;
  /** Why the target did not answer. */
  readonly error?: string;
}

/** Every attachable process of this user, asked for its ProcessInfo; dead processes' endpoints are removed. */
export async function listTargets(): Promise<TargetListing[]> {
  const found = await Promise.all(
    listEndpoints().map(async (endpoint): Promise<TargetListing | undefined> => {
      let socket: net.Socket;
      try {
        socket = await connectEndpoint(endpoint.path, CONNECT_TIMEOUT_MS);
      } catch (e) {
        if (isStale(e)) {
          removeEndpoint(endpoint.path);
          return undefined;
        }
        return { endpoint, error: (e as Error).message };
      }
      try {
        return { endpoint, info: await ask(socket, PROCESS_INFO, INFO_TIMEOUT_MS, 'ProcessInfo', decodeProcessInfo) };
      } catch (e) {
        return { endpoint, error: (e as Error).message };
      }
    }),
  );
  return found.filter((t): t is TargetListing => t !== undefined).sort((a, b) => a.endpoint.pid - b.endpoint.pid);
}
