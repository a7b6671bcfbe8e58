/**
 * Payload layouts of the diagnostics commands (docs/IPC.md). Integers are little-endian; `string` is a
 * varint byte length then UTF-8. Decoders ignore trailing bytes, so a newer client may append fields.
 */
import { ByteReader } from '../format/byte-reader.js';
import { ByteWriter } from '../format/byte-writer.js';
import type { BufferingModeName, StreamingModeName } from '../buffers/session-memory.js';
import { IpcError, IpcErrorCode } from './ipc-protocol.js';

export interface CollectRequest {
  /** Provider spec, dotnet-trace syntax. */
  readonly providers: string;
  readonly bufferingMode: StreamingModeName;
  /** The session's buffer budget in MiB (sent in KiB). */
  readonly bufferSizeMB: number;
  readonly rundown: boolean;
}

export interface SessionInfo {
  readonly id: number;
  readonly providers: string;
  readonly bufferingMode: BufferingModeName;
  readonly state: string;
  /** True when the session streams to a diagnostics client. */
  readonly attached: boolean;
  /** The bytes of its buffer, and the events of a typical size it holds (absent from older tracepipes' replies). */
  readonly buffer?: { readonly bytes: number; readonly events: number; readonly eventBytes: number };
  /** A session exporting over OTLP: items sent and dropped so far (absent from older tracepipes' replies). */
  readonly otlp?: { readonly sent: number; readonly dropped: number };
}

export interface ProcessInfo {
  readonly pid: number;
  /** Process start, ms since the Unix epoch. */
  readonly startTimeMs: number;
  readonly nodeVersion: string;
  readonly tracepipeVersion: string;
  readonly cwd: string;
  readonly title: string;
  readonly argv: readonly string[];
  readonly execArgv: readonly string[];
  readonly sessions: readonly SessionInfo[];
}

export interface StopResult {
  readonly sessionId: number;
  readonly status: 'stopped' | 'failed';
  readonly eventsWritten: number;
  readonly eventsDropped: number;
  readonly bytesWritten: number;
  /** Why the session failed ('' when it did not). */
  readonly error: string;
}

function decode<T>(what: string, payload: Uint8Array, read: (r: ByteReader) => T): T {
  try {
    return read(new ByteReader(payload));
  } catch (e) {
    if (e instanceof IpcError) throw e;
    throw new IpcError(IpcErrorCode.BadPayload, `malformed ${what} payload`);
  }
}

const MODES: readonly BufferingModeName[] = ['drop', 'block', 'ring'];

function mode(r: ByteReader): BufferingModeName {
  const m = r.u8();
  const name = MODES[m];
  if (name === undefined) throw new IpcError(IpcErrorCode.BadPayload, `unknown buffering mode ${m}`);
  return name;
}

function strings(w: ByteWriter, list: readonly string[]): void {
  w.varint(list.length);
  for (const s of list) w.string(s);
}

function readStrings(r: ByteReader): string[] {
  const n = r.varint();
  const out: string[] = [];
  // Each string takes at least one byte, so a count beyond the payload is a lie.
  if (n > r.end - r.pos) r.fail('string count');
  for (let i = 0; i < n; i++) out.push(r.string());
  return out;
}

/** providers: string, mode: u8 (0 drop, 1 block, 2 ring), buffer size: u32 KiB, rundown: u8. */
export function encodeCollectRequest(q: CollectRequest): Uint8Array {
  const w = new ByteWriter(64 + q.providers.length * 3);
  w.string(q.providers);
  w.u8(MODES.indexOf(q.bufferingMode));
  w.u32(Math.round(q.bufferSizeMB * 1024));
  w.u8(q.rundown ? 1 : 0);
  return w.take();
}

export function decodeCollectRequest(p: Uint8Array): CollectRequest {
  return decode('CollectTracing', p, (r) => {
    const providers = r.string();
    const bufferingMode = mode(r);
    if (bufferingMode === 'ring') throw new IpcError(IpcErrorCode.BadPayload, 'a collected session streams as it goes: buffering mode drop or block (a ring is a flight recorder: DumpRecorder)');
    const kib = r.u32();
    const rundown = r.u8();
    if (rundown > 1) throw new IpcError(IpcErrorCode.BadPayload, `rundown must be 0 or 1, not ${rundown}`);
    return { providers, bufferingMode, bufferSizeMB: kib / 1024, rundown: rundown === 1 };
  });
}

/**
 * StopTracing's and DumpRecorder's request (0: the process's flight recorder), and CollectTracing's
 * and DumpRecorder's reply (the trace stream follows it): session id u32.
 */
export function encodeSessionId(id: number): Uint8Array {
  const w = new ByteWriter(4);
  w.u32(id);
  return w.take();
}

export function decodeSessionId(p: Uint8Array, what: string): number {
  return decode(what, p, (r) => r.u32());
}

/** Reply to StopTracing: id u32, status u8 (0 stopped, 1 failed), events f64, dropped f64, bytes f64, error string. */
export function encodeStopResult(s: StopResult): Uint8Array {
  const w = new ByteWriter(64 + s.error.length * 3);
  w.u32(s.sessionId);
  w.u8(s.status === 'failed' ? 1 : 0);
  w.f64(s.eventsWritten);
  w.f64(s.eventsDropped);
  w.f64(s.bytesWritten);
  w.string(s.error);
  return w.take();
}

export function decodeStopResult(p: Uint8Array): StopResult {
  return decode('StopTracing reply', p, (r) => ({
    sessionId: r.u32(),
    status: r.u8() === 1 ? 'failed' : 'stopped',
    eventsWritten: r.f64(),
    eventsDropped: r.f64(),
    bytesWritten: r.f64(),
    error: r.string(),
  }));
}

/**
 * pid u32, start time f64 (ms since the epoch), node version, tracepipe version, cwd, title (strings),
 * argv and execArgv (varint count, strings), sessions (varint count; each: id u32, providers string,
 * mode u8, state string, attached u8), then each session's buffer (bytes, events of a typical
 * size and their bytes: f64 ×3), after the list, so that a reader that does not know them stops before.
 */
export function encodeProcessInfo(info: ProcessInfo): Uint8Array {
  const w = new ByteWriter(1024);
  w.u32(info.pid);
  w.f64(info.startTimeMs);
  w.string(info.nodeVersion);
  w.string(info.tracepipeVersion);
  w.string(info.cwd);
  w.string(info.title);
  strings(w, info.argv);
  strings(w, info.execArgv);
  w.varint(info.sessions.length);
  for (const s of info.sessions) {
    w.u32(s.id);
    w.string(s.providers);
    w.u8(MODES.indexOf(s.bufferingMode));
    w.string(s.state);
    w.u8(s.attached ? 1 : 0);
  }
  for (const s of info.sessions) for (const v of [s.buffer?.bytes, s.buffer?.events, s.buffer?.eventBytes]) w.f64(v ?? NaN);
  for (const s of info.sessions) for (const v of [s.otlp?.sent, s.otlp?.dropped]) w.f64(v ?? NaN);
  return w.take();
}

function withBuffer(s: SessionInfo, bytes: number, events: number, eventBytes: number): SessionInfo {
  return [bytes, events, eventBytes].every((v) => Number.isFinite(v) && v >= 0) ? { ...s, buffer: { bytes, events, eventBytes } } : s;
}

function withOtlp(s: SessionInfo, sent: number, dropped: number): SessionInfo {
  return [sent, dropped].every((v) => Number.isFinite(v) && v >= 0) ? { ...s, otlp: { sent, dropped } } : s;
}

export function decodeProcessInfo(p: Uint8Array): ProcessInfo {
  return decode('ProcessInfo reply', p, (r) => {
    const head = {
      pid: r.u32(),
      startTimeMs: r.f64(),
      nodeVersion: r.string(),
      tracepipeVersion: r.string(),
      cwd: r.string(),
      title: r.string(),
      argv: readStrings(r),
      execArgv: readStrings(r),
    };
    const n = r.varint();
    if (n > r.end - r.pos) r.fail('session count');
    const sessions: SessionInfo[] = [];
    for (let i = 0; i < n; i++) sessions.push({ id: r.u32(), providers: r.string(), bufferingMode: mode(r), state: r.string(), attached: r.u8() === 1 });
    // Budgets follow when the process sent them, then OTLP counts.
    if (r.pos >= r.end) return { ...head, sessions };
    const buffered = sessions.map((s) => withBuffer(s, r.f64(), r.f64(), r.f64()));
    if (r.pos >= r.end) return { ...head, sessions: buffered };
    return { ...head, sessions: buffered.map((s) => withOtlp(s, r.f64(), r.f64())) };
  });
}
