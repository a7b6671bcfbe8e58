import { crc32 } from './crc32.js';
import { TraceFormatError } from './format-error.js';

/**
 * Every block: u8 kind, u8 flags, u16 reserved, u32 payload length, u32 CRC-32, then the payload.
 * The checksum covers the first 8 header bytes and the payload, so a flipped kind or length is
 * caught rather than read as an unknown block. A reader skips kinds it does not know, so new kinds are a minor version bump.
 */
export const BlockKind = {
  Metadata: 1,
  Events: 2,
  SequencePoint: 3,
  EndOfStream: 4,
  /** Format 1.1: drops per thread by reason, written just before the end of stream. */
  DropReasons: 5,
  /** Format 1.2: what a session's OTLP export sent and dropped, written just before the end of stream. */
  OtlpExport: 6,
} as const;
export type BlockKind = (typeof BlockKind)[keyof typeof BlockKind];

export const BLOCK_HEADER_SIZE = 12;
/** Writers never produce bigger blocks; a reader treats a bigger length as corruption. */
export const MAX_BLOCK_PAYLOAD = 16 << 20;

export interface BlockHeader {
  readonly kind: number;
  readonly flags: number;
  readonly length: number;
  readonly crc: number;
}

export function readBlockHeader(buf: Uint8Array, at: number, streamOffset: number): BlockHeader {
  const v = new DataView(buf.buffer, buf.byteOffset + at, BLOCK_HEADER_SIZE);
  const h = { kind: v.getUint8(0), flags: v.getUint8(1), length: v.getUint32(4, true), crc: v.getUint32(8, true) };
  if (h.kind === 0 || h.length > MAX_BLOCK_PAYLOAD) {
    throw new TraceFormatError('corrupt', `corrupt trace: implausible block (kind ${h.kind}, length ${h.length}) at byte ${streamOffset}`, streamOffset);
  }
  return h;
}

/** CRC-32 of a block's kind, flags, reserved and length bytes, then its payload. */
export function blockChecksum(header: Uint8Array, payload: Uint8Array): number {
  return crc32(payload, crc32(header.subarray(0, 8)));
}

/** `block` is the whole block: header then payload. */
export function checkBlock(h: BlockHeader, block: Uint8Array, streamOffset: number): void {
  if (blockChecksum(block, block.subarray(BLOCK_HEADER_SIZE)) !== h.crc) {
    throw new TraceFormatError('corrupt', `corrupt trace: checksum mismatch in block (kind ${h.kind}) at byte ${streamOffset}`, streamOffset);
  }
}

/** The end-of-stream payload has a fixed size so a reader can find it from the end of a file. */
export const END_OF_STREAM_PAYLOAD = 48;
