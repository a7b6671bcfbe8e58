import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { BLOCK_HEADER_SIZE, BlockKind, readBlockHeader } from '../../dist/format/block.js';
import { ByteReader } from '../../dist/format/byte-reader.js';
import { HEADER_PREFIX, headerSize } from '../../dist/format/stream-header.js';
import { EventFlag } from '../../dist/format/trace-writer.js';

const KIND_NAMES = { [BlockKind.Metadata]: 'metadata', [BlockKind.Events]: 'events', [BlockKind.SequencePoint]: 'sequencePoint', [BlockKind.EndOfStream]: 'endOfStream' };

/**
 * Where the bytes of a .tptrace file go: the stream header, each block kind (with its 12-byte block
 * header), and inside events blocks each event's compressed header (flags, type, thread, sequence,
 * timestamp delta, payload length) versus its payload. Decodes the event headers exactly as the
 * format defines them (docs/FORMAT.md), so `eventHeaderBytes / events` is the measured average.
 */
export function traceAnatomy(path) {
  const fd = openSync(path, 'r');
  try {
    const fileBytes = fstatSync(fd).size;
    const read = (at, n) => {
      const b = new Uint8Array(n);
      let got = 0;
      while (got < n) {
        const k = readSync(fd, b, got, n - got, at + got);
        if (k === 0) throw new Error(`${path}: unexpected end of file at byte ${at + got}`);
        got += k;
      }
      return b;
    };
    const streamHeaderBytes = headerSize(read(0, HEADER_PREFIX));
    const blocks = {};
    let events = 0;
    let eventHeaderBytes = 0;
    let payloadBytes = 0;
    let blockBaseTimestampBytes = 0;
    let at = streamHeaderBytes;
    while (at < fileBytes) {
      const h = readBlockHeader(read(at, BLOCK_HEADER_SIZE), 0, at);
      const name = KIND_NAMES[h.kind] ?? `kind${h.kind}`;
      const b = (blocks[name] ??= { count: 0, bytes: 0 });
      b.count++;
      b.bytes += BLOCK_HEADER_SIZE + h.length;
      if (h.kind === BlockKind.Events) {
        const r = new ByteReader(read(at + BLOCK_HEADER_SIZE, h.length), 0, h.length, at + BLOCK_HEADER_SIZE);
        r.varint();
        blockBaseTimestampBytes += r.pos;
        while (!r.done) {
          const start = r.pos;
          const flags = r.u8();
          if (flags & EventFlag.NewType) r.varint();
          if (flags & EventFlag.NewThread) {
            r.varint();
            r.varint();
          } else if (flags & EventFlag.SequenceJump) r.varint();
          r.varint();
          const len = r.varint();
          eventHeaderBytes += r.pos - start;
          payloadBytes += len;
          r.pos += len;
          events++;
        }
      }
      at += BLOCK_HEADER_SIZE + h.length;
    }
    return { fileBytes, streamHeaderBytes, blocks, events, eventHeaderBytes, payloadBytes, blockBaseTimestampBytes };
  } finally {
    closeSync(fd);
  }
}
