// Hostile but well-framed traces, built with the project's own encoders (TraceWriter, ByteWriter and
// checksummed blocks), so that they pass every checksum and reach the parts of the reader that hold
// memory: the reorder window, the type table, the per-thread tables, the block buffer. Each builder
// writes about `targetBytes` to a file and is deterministic for a seed.
import { closeSync, openSync, writeSync } from 'node:fs';
import { ByteWriter } from '../../dist/format/byte-writer.js';
import { TraceWriter } from '../../dist/format/trace-writer.js';
import { MAX_EVENT_TYPES, MAX_FIELDS_IN_ALL_TYPES, MAX_THREADS } from '../../dist/format/reader-limits.js';
import { zigzag } from '../../dist/format/varint.js';
import { MAX_FIELDS_PER_EVENT } from '../../dist/schema/definition-limits.js';
import { headerInfo, prng, rawBlock } from './synthetic-trace.mjs';

const TICK = { provider: 'Bomb.App', name: 'Tick', id: 1, version: 0, level: 4, keywords: 0n, fields: [['a', 'f64'], ['n', 'u32'], ['m', 'u32'], ['k', 'i32']] };
const EMPTY = { provider: 'Bomb.App', name: 'Empty', id: 2, version: 0, level: 4, keywords: 0n, fields: [] };
const BLOB = { provider: 'Bomb.App', name: 'Blob', id: 3, version: 0, level: 4, keywords: 0n, fields: [['data', 'bytes']] };
/** The fields of a wide type, built once per width: a type bomb writes thousands of types of the same fields. */
const boolFields = new Map();
const fieldsOf = (n) => boolFields.get(n) ?? boolFields.set(n, Array.from({ length: n }, (_, f) => [`f${f}`, 'bool'])).get(n);
const wide = (i, n) => ({ provider: 'Bomb.Wide', name: `T${i}`, id: i & 0xffff, version: 0, level: 4, keywords: 0n, fields: fieldsOf(n) });
/** One empty payload for every event without fields: a new array per event made the writer set up its payload view each time. */
const NO_PAYLOAD = new Uint8Array(0);

/** A TraceWriter whose output goes to a file as it grows, with the bytes written so far. */
class FileTrace {
  constructor(path) {
    this.fd = openSync(path, 'w');
    this.w = new TraceWriter();
    this.bytes = 0;
    this.w.header(headerInfo());
  }
  flush() {
    const b = this.w.take(); // lent until the next call on the writer
    if (b) this.write(b);
  }
  /** Bytes framed by hand, after whatever the writer holds. */
  raw(b) {
    this.flush();
    this.write(b);
  }
  write(b) {
    writeSync(this.fd, b);
    this.bytes += b.length;
  }
  get size() {
    return this.bytes + this.w.pendingBytes;
  }
  close(totals) {
    if (totals) this.w.end({ events: 0, dropped: 0, endTimeNs: 0, maxLatenessNs: 0, threads: 0, eventTypes: 0, ...totals });
    this.flush();
    closeSync(this.fd);
  }
}

function tickPayload(rnd) {
  const p = new Uint8Array(20);
  const v = new DataView(p.buffer);
  v.setFloat64(0, rnd.next() * 1e6, true);
  v.setUint32(8, rnd.int(2 ** 32), true);
  v.setUint32(12, rnd.int(2 ** 32), true);
  v.setInt32(16, rnd.int(2 ** 31), true);
  return p;
}

/** Ordinary traffic: 4 threads of 20-byte events, a sequence point every 1,000 events. Returns the last timestamp. */
function steady(t, rnd, until, { ts = 1000, everyNs = 200, maxLatenessNs = 0 } = {}) {
  const payloads = Array.from({ length: 64 }, () => tickPayload(rnd));
  const seq = [0, 0, 0, 0];
  let n = 0;
  while (t.size < until) {
    const thread = rnd.int(4);
    ts += 1 + rnd.int(everyNs);
    const p = payloads[n & 63];
    t.w.event(1, thread + 1, seq[thread]++, ts, p, 0, p.length);
    if (++n % 1000 === 0) {
      t.w.sequencePoint(ts, maxLatenessNs, seq.map((s, i) => ({ threadId: i + 1, nextSeq: s, dropped: 0 })));
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
  }
  return ts;
}

/** A varint that takes all 8 bytes the format allows, whatever its value (over-long but legal). */
function longVarint(out, n) {
  for (let i = 0; i < 7; i++) {
    out.u8((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  out.u8(n);
}

export const HOSTILE_TRACES = {
  /** Not hostile: what a drain writes for a busy process, as a yardstick. */
  ordinary(t, rnd, target) {
    t.w.metadata(1, TICK);
    const ts = steady(t, rnd, target);
    return { endTimeNs: ts };
  },
  /** Every event from a thread never seen before: per-thread tables past any real process. */
  threadBomb(t, rnd, target) {
    t.w.metadata(2, EMPTY);
    let ts = 0;
    let thread = 1;
    while (t.size < target) {
      thread += 1 + rnd.int(3);
      t.w.event(2, thread, 0, (ts += 1 + rnd.int(100)), NO_PAYLOAD, 0, 0);
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    return { events: 0 };
  },
  /** As many distinct threads as a reader takes, round and round. */
  threadsAtLimit(t, rnd, target) {
    t.w.metadata(2, EMPTY);
    const seq = new Array(MAX_THREADS).fill(0);
    let ts = 0;
    for (let i = 0; t.size < target; i++) {
      const thread = (i * 7919) % seq.length;
      t.w.event(2, thread, seq[thread]++, (ts += 1 + rnd.int(100)), NO_PAYLOAD, 0, 0);
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    return { events: 0 };
  },
  /** Types of as many fields as allowed, one after the other, past the limit on all fields together. */
  typeBomb(t, rnd, target) {
    for (let i = 1; t.size < target; i++) {
      t.w.metadata(i, wide(i, MAX_FIELDS_PER_EVENT));
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    return { eventTypes: 0 };
  },
  /** As many of the widest types as allowed, then events of them: each decodes into tens of KB. */
  wideEvents(t, rnd, target) {
    const fields = MAX_FIELDS_PER_EVENT;
    const types = MAX_FIELDS_IN_ALL_TYPES / fields;
    for (let i = 1; i <= types; i++) t.w.metadata(i, wide(i, fields));
    const payload = Uint8Array.from({ length: fields }, () => rnd.int(2));
    let ts = 0;
    for (let n = 0; t.size < target; n++) {
      t.w.event(1 + (n % types), 1, n, (ts += 1 + rnd.int(1000)), payload, 0, payload.length);
      if (n % 100 === 99) t.w.sequencePoint(ts, 0, [{ threadId: 1, nextSeq: n + 1, dropped: 0 }]);
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    return { eventTypes: types };
  },
  /** As many types as a reader takes, each with the most fields left for it, then events of all of them at random. */
  manyTypes(t, rnd, target) {
    const types = MAX_EVENT_TYPES;
    const fields = MAX_FIELDS_IN_ALL_TYPES / types;
    for (let i = 1; i <= types; i++) {
      t.w.metadata(i, { ...wide(i, fields), name: `Type-${i}-${'x'.repeat(rnd.int(200))}` });
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    const payload = new Uint8Array(fields);
    let ts = 0;
    for (let n = 0; t.size < target; n++) {
      t.w.event(1 + rnd.int(types), 1, n, (ts += 1 + rnd.int(1000)), payload, 0, payload.length);
      if (t.w.pendingBytes > 1 << 20) t.flush();
    }
    return { eventTypes: types };
  },
  /**
   * One event written late with a timestamp from the start (writeAt with an old time): the drain
   * records the whole trace as the maximum lateness, and so does the end-of-stream block.
   */
  lateEvent(t, rnd, target) {
    t.w.metadata(1, TICK);
    const p = tickPayload(rnd);
    let ts = steady(t, rnd, target / 2);
    const late = ts - 1000;
    t.w.event(1, 9, 0, 1000, p, 0, p.length);
    ts = steady(t, rnd, target, { ts, maxLatenessNs: late });
    return { maxLatenessNs: late, endTimeNs: ts };
  },
  /** An end-of-stream block that claims the largest lateness a reader could take for real. */
  hostileEnd(t, rnd, target) {
    t.w.metadata(1, TICK);
    const ts = steady(t, rnd, target);
    return { maxLatenessNs: Number.MAX_SAFE_INTEGER, endTimeNs: ts };
  },
  /** Sequence points that claim every event is late by 2^53 ns, and an end that says NaN. */
  hostileSequencePoints(t, rnd, target) {
    t.w.metadata(1, TICK);
    const ts = steady(t, rnd, target, { maxLatenessNs: 2 ** 53 - 1 });
    return { maxLatenessNs: NaN, endTimeNs: ts };
  },
  /** Blocks of the largest length a reader takes, each holding millions of 3-byte events. */
  hugeBlocks(t, rnd, target) {
    t.w.metadata(2, EMPTY);
    let seq = 0;
    let ts = 0;
    while (t.size < target) {
      const out = new ByteWriter(16 << 20);
      out.varint(zigzag(ts)); // base timestamp
      out.u8(3); // the first event names its type and thread
      out.varint(2);
      out.varint(1);
      out.varint(seq++);
      out.u8(0);
      out.u8(0);
      const end = (16 << 20) - 3;
      const b = out.buf;
      let p = out.pos;
      // Then flags 0 (same type and thread, next sequence), a delta below 64 ns, no payload.
      for (; p < end; p += 3, seq++) {
        const delta = rnd.int(64);
        ts += delta;
        b[p] = 0;
        b[p + 1] = delta * 2;
        b[p + 2] = 0;
      }
      out.pos = p;
      t.raw(rawBlock(2, out.take()));
    }
    return { events: seq };
  },
  /** Events of one 1 MiB byte array each (the largest payload a reader takes). */
  bigPayloads(t, rnd, target) {
    t.w.metadata(3, BLOB);
    const n = 1 << 20;
    const payload = new Uint8Array(4 + n - 4);
    new DataView(payload.buffer).setUint32(0, n - 4, true);
    for (let i = 4; i < n; i++) payload[i] = rnd.int(256);
    let ts = 0;
    for (let i = 0; t.size < target; i++) {
      t.w.event(3, 1, i, (ts += 1000), payload, 0, payload.length);
      t.flush();
    }
    return { events: 0 };
  },
  /** Sequence points of as many threads as a reader takes, back to back. */
  sequencePointBomb(t, rnd, target) {
    const threads = Array.from({ length: MAX_THREADS }, (_, i) => ({ threadId: i * 3 + rnd.int(3), nextSeq: rnd.int(1000), dropped: 0 }));
    for (let ts = 0; t.size < target; ts += 1000) {
      t.w.sequencePoint(ts, 0, threads);
      t.flush();
    }
    return { events: 0 };
  },
  /** Every varint in 8 bytes (over-long but legal), and finally one in 9: corrupt. */
  deepVarints(t, rnd, target) {
    t.w.metadata(1, TICK);
    const p = tickPayload(rnd);
    let ts = 0;
    let seq = 0;
    while (t.size < target) {
      const out = new ByteWriter(1 << 16);
      longVarint(out, zigzag(ts));
      while (out.pos < 60_000) {
        out.u8(3); // new type, new thread
        longVarint(out, 1);
        longVarint(out, 1 + rnd.int(4));
        longVarint(out, seq++);
        longVarint(out, zigzag((ts += rnd.int(1000))));
        longVarint(out, p.length);
        out.bytes(p);
      }
      t.raw(rawBlock(2, out.take()));
    }
    const out = new ByteWriter(64);
    longVarint(out, 0);
    out.u8(3);
    for (let i = 0; i < 9; i++) out.u8(0x80);
    out.u8(1);
    t.raw(rawBlock(2, out.take()));
    return null; // ends in damage, no end-of-stream block
  },
  /** Ordinary traffic, then a block whose header declares the largest length and a stream that ends inside it. */
  truncatedHugeBlock(t, rnd, target) {
    t.w.metadata(1, TICK);
    steady(t, rnd, target - (1 << 20));
    const head = rawBlock(2, new Uint8Array(0));
    new DataView(head.buffer).setUint32(4, 16 << 20, true);
    t.raw(head);
    t.raw(new Uint8Array(1 << 20).fill(7));
    return null;
  },
  /** Ordinary traffic, then one event whose payload length is 2^53 - 1. */
  hugeDeclaredLengths(t, rnd, target) {
    t.w.metadata(1, TICK);
    const ts = steady(t, rnd, target);
    const ev = new ByteWriter(64);
    ev.varint(zigzag(ts));
    ev.u8(3);
    ev.varint(1);
    ev.varint(1);
    ev.varint(0);
    ev.varint(0);
    ev.varint(2 ** 53 - 1);
    t.raw(rawBlock(2, ev.take()));
    return null;
  },
};

/** Writes the trace `kind` of about `targetBytes` to `path`. */
export function writeHostileTrace(kind, path, targetBytes, seed) {
  const t = new FileTrace(path);
  const totals = HOSTILE_TRACES[kind](t, prng(seed), targetBytes);
  t.close(totals);
  return t.bytes;
}
