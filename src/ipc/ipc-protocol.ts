/**
 * The diagnostics protocol's framing (docs/IPC.md): every message is a 12-byte header, then its payload.
 *
 *   0  4  magic "TPDS"
 *   4  1  protocol version (1)
 *   5  1  command set
 *   6  1  command id
 *   7  1  reserved, 0
 *   8  4  payload length, u32 little-endian
 *
 * A request is one frame; the reply is one frame of the Server set: OK (a command-specific payload) or
 * Error (u32 code, then a varint-length UTF-8 message). Nothing here trusts its input.
 */
import { ByteReader } from '../format/byte-reader.js';
import { ByteWriter } from '../format/byte-writer.js';

export const IPC_MAGIC = new Uint8Array([0x54, 0x50, 0x44, 0x53]); // "TPDS"
export const IPC_VERSION = 1;
export const FRAME_HEADER_SIZE = 12;
/** Requests are small; anything bigger is refused before it is buffered. */
export const MAX_REQUEST_PAYLOAD = 64 * 1024;
/** Replies carry argv and session lists; a client refuses anything bigger. */
export const MAX_REPLY_PAYLOAD = 16 * 1024 * 1024;

export const CommandSet = { Process: 0x01, Tracing: 0x02, Server: 0xff } as const;
export const ProcessCommand = { ProcessInfo: 0x00 } as const;
/** DumpRecorder: a ring session (flight recorder) writes its contents to the connection, then it closes. */
export const TracingCommand = { CollectTracing: 0x01, StopTracing: 0x02, DumpRecorder: 0x03 } as const;
export const ServerCommand = { Ok: 0x00, Error: 0xff } as const;

export const IpcErrorCode = {
  /** Bad magic, a reserved byte set, or a frame cut short. */
  BadFrame: 1,
  UnsupportedVersion: 2,
  PayloadTooLarge: 3,
  UnknownCommand: 4,
  /** The payload does not decode as the command's layout. */
  BadPayload: 5,
  /** The payload decodes but asks for something invalid (a bad provider spec, buffer size...). */
  BadRequest: 6,
  UnknownSession: 7,
  SessionFailed: 8,
  /** Too many requests in flight; try again. */
  Busy: 9,
  /** No complete request arrived in time. */
  Timeout: 10,
  /** The process already runs as many sessions as it allows (TRACEPIPE_MAX_SESSIONS). */
  SessionLimit: 11,
} as const;
export type IpcErrorCode = (typeof IpcErrorCode)[keyof typeof IpcErrorCode];

export class IpcError extends Error {
  override readonly name = 'IpcError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Frame {
  readonly commandSet: number;
  readonly commandId: number;
  readonly payload: Uint8Array;
}

export function encodeFrame(commandSet: number, commandId: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_SIZE + payload.length);
  out.set(IPC_MAGIC, 0);
  out[4] = IPC_VERSION;
  out[5] = commandSet;
  out[6] = commandId;
  new DataView(out.buffer).setUint32(8, payload.length, true);
  out.set(payload, FRAME_HEADER_SIZE);
  return out;
}

export function okFrame(payload?: Uint8Array): Uint8Array {
  return encodeFrame(CommandSet.Server, ServerCommand.Ok, payload);
}

export function errorFrame(code: number, message: string): Uint8Array {
  const w = new ByteWriter(64 + message.length * 3);
  w.u32(code);
  w.string(message);
  return encodeFrame(CommandSet.Server, ServerCommand.Error, w.take());
}

/** A reply's payload when it is OK; a remote error becomes an IpcError with the target's code and message. */
export function replyPayload(frame: Frame): Uint8Array {
  if (frame.commandSet !== CommandSet.Server) throw new IpcError(IpcErrorCode.BadFrame, `expected a reply, got command set ${frame.commandSet}`);
  if (frame.commandId === ServerCommand.Ok) return frame.payload;
  if (frame.commandId !== ServerCommand.Error) throw new IpcError(IpcErrorCode.BadFrame, `unknown reply kind ${frame.commandId}`);
  let code: number;
  let message: string;
  try {
    const r = new ByteReader(frame.payload);
    code = r.u32();
    message = r.string();
  } catch {
    throw new IpcError(IpcErrorCode.BadPayload, 'malformed error reply');
  }
  throw new IpcError(code, message);
}

/**
 * Reassembles one frame from a byte stream, validating the header as soon as it is complete, so a bad
 * or oversized message is refused before its payload is buffered.
 */
export class FrameReader {
  private buf = new Uint8Array(FRAME_HEADER_SIZE);
  private have = 0;
  private need = FRAME_HEADER_SIZE;
  private header: { commandSet: number; commandId: number } | undefined;
  private rest = new Uint8Array(0);

  constructor(private readonly maxPayload: number) {}

  /** Bytes received so far of a frame that is not complete yet. */
  get buffered(): number {
    return this.have;
  }

  /** Bytes that arrived after the complete frame (for a streaming reply, the start of the stream). */
  get remainder(): Uint8Array {
    return this.rest;
  }

  /** Feeds bytes; returns the frame once complete. Throws IpcError on a bad header. */
  push(chunk: Uint8Array): Frame | undefined {
    let off = 0;
    while (off < chunk.length) {
      const n = Math.min(this.need - this.have, chunk.length - off);
      this.buf.set(chunk.subarray(off, off + n), this.have);
      this.have += n;
      off += n;
      if (this.have < this.need) continue;
      if (!this.header) {
        const length = this.readHeader();
        this.need = FRAME_HEADER_SIZE + length;
        if (length > 0) {
          const grown = new Uint8Array(this.need);
          grown.set(this.buf.subarray(0, FRAME_HEADER_SIZE));
          this.buf = grown;
          continue;
        }
      }
      this.rest = chunk.slice(off);
      const h = this.header!;
      return { commandSet: h.commandSet, commandId: h.commandId, payload: this.buf.subarray(FRAME_HEADER_SIZE, this.need) };
    }
    return undefined;
  }

  private readHeader(): number {
    const b = this.buf;
    for (let i = 0; i < IPC_MAGIC.length; i++) {
      if (b[i] !== IPC_MAGIC[i]) throw new IpcError(IpcErrorCode.BadFrame, 'not a tracepipe diagnostics message (bad magic)');
    }
    if (b[4] !== IPC_VERSION) throw new IpcError(IpcErrorCode.UnsupportedVersion, `protocol version ${b[4]} is not supported (this process speaks ${IPC_VERSION})`);
    if (b[7] !== 0) throw new IpcError(IpcErrorCode.BadFrame, 'reserved header byte must be 0');
    const length = new DataView(b.buffer, b.byteOffset).getUint32(8, true);
    if (length > this.maxPayload) throw new IpcError(IpcErrorCode.PayloadTooLarge, `payload of ${length} bytes exceeds the limit of ${this.maxPayload}`);
    this.header = { commandSet: b[5]!, commandId: b[6]! };
    return length;
  }
}
