// Traces built directly with TraceWriter, one take() per block, so a test knows the byte range and
// the events of every block. Deterministic for a given seed.
import { TraceWriter } from '../../dist/format/trace-writer.js';
import { blockChecksum } from '../../dist/format/block.js';
import { generateWriter } from '../../dist/schema/event-writer.js';
import { computePayloadLayout } from '../../dist/schema/payload-layout.js';
import { fakeRecordTarget, recordAt0 } from './fake-record-target.mjs';

export const SYNTH_TYPES = [
  { typeId: 1, d: { provider: 'Synth.App', name: 'Tick', id: 1, version: 0, level: 4, keywords: 1n, fields: [['a', 'f64'], ['n', 'u32'], ['big', 'i64'], ['label', 'string']] } },
  { typeId: 2, d: { provider: 'Synth.App', name: 'Blob', id: 2, version: 3, level: 5, keywords: 0n, fields: [['ok', 'bool'], ['data', 'bytes']] } },
];

export function headerInfo() {
  return {
    pid: 1234,
    processTitle: 'synthetic',
    argv: ['node', 'synthetic.mjs'],
    execArgv: [],
    nodeVersion: process.version,
    tracepipeVersion: '0.0.0-test',
    platform: process.platform,
    arch: process.arch,
    hostname: 'test-host',
    clock: { wallClockNs: '1700000000000000000', monotonicNs: '5000' },
    session: { id: 1, providers: 'Synth.App:0xffffffffffffffff:5', bufferingMode: 'drop', bufferSizeMB: 1 },
  };
}

/** A small deterministic PRNG (mulberry32), so a seed names a trace. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n) };
}

const writers = SYNTH_TYPES.map(({ d }) => generateWriter(computePayloadLayout(d.fields), 1, { now: () => 0 }, false, (k, v) => { throw new Error(`synthetic writer refused field ${k}: ${String(v)}`); }));

function payloadOf(typeIndex, values) {
  const t = fakeRecordTarget(4096);
  writers[typeIndex].call({ _targets: [t] }, ...values);
  const r = recordAt0(t);
  return t.u8.slice(r.payloadStart, r.payloadStart + r.payloadLength);
}

/**
 * Returns { bytes, headerEnd, blocks: [{ kind, start, end, events }], events (stream order, which is
 * also timestamp order), threads: Map(threadId → { nextSeq, dropped }) }. Some sequence numbers are
 * skipped, as drops would; a thread's last attempts may be drops only the final sequence point shows.
 */
export function syntheticTrace({ seed = 1, batches = 8, perBatch = 6, threads = [0, 3, 7] } = {}) {
  const rnd = prng(seed);
  const w = new TraceWriter();
  const parts = [];
  const blocks = [];
  let pos = 0;
  const take = (kind, events = 0) => {
    const b = w.take().slice(); // take() lends its buffer until the next call
    parts.push(b);
    if (kind) blocks.push({ kind, start: pos, end: pos + b.length, events });
    pos += b.length;
  };
  w.header(headerInfo());
  take(undefined);
  const headerEnd = pos;
  for (const t of SYNTH_TYPES) {
    w.metadata(t.typeId, t.d);
    take('metadata');
  }
  const state = new Map(threads.map((id) => [id, { nextSeq: 0, dropped: 0 }]));
  const progress = () => [...state].map(([threadId, s]) => ({ threadId, nextSeq: s.nextSeq, dropped: s.dropped }));
  const events = [];
  let ts = 1000 + rnd.int(1000);
  for (let b = 0; b < batches; b++) {
    const n = 1 + rnd.int(perBatch);
    for (let i = 0; i < n; i++) {
      const threadId = threads[rnd.int(threads.length)];
      const s = state.get(threadId);
      if (rnd.next() < 0.15) {
        const lost = 1 + rnd.int(5);
        s.nextSeq += lost;
        s.dropped += lost;
      }
      const sequence = s.nextSeq++;
      ts += 1 + rnd.int(5000);
      const type = rnd.int(SYNTH_TYPES.length);
      let fields;
      let values;
      if (type === 0) {
        values = [rnd.next() * 1e6 - 5e5, rnd.int(2 ** 32), BigInt(rnd.int(2 ** 31)) * -12345n, `label-${rnd.int(1000)}-é✓`];
        fields = { a: values[0], n: values[1], big: values[2], label: values[3] };
      } else {
        values = [rnd.next() < 0.5, Uint8Array.from({ length: rnd.int(40) }, () => rnd.int(256))];
        fields = { ok: values[0], data: values[1] };
      }
      const payload = payloadOf(type, values);
      w.event(SYNTH_TYPES[type].typeId, threadId, sequence, ts, payload, 0, payload.length);
      events.push({ provider: 'Synth.App', name: SYNTH_TYPES[type].d.name, threadId, sequence, timestampNs: ts, fields });
    }
    take('events', n);
    if (b % 3 === 2 || b === batches - 1) {
      if (b === batches - 1 && rnd.next() < 0.5) {
        const s = state.get(threads[0]);
        s.nextSeq += 2;
        s.dropped += 2;
      }
      w.sequencePoint(ts, 0, progress());
      take('sequence');
    }
  }
  w.end({ events: events.length, dropped: [...state.values()].reduce((n, s) => n + s.dropped, 0), endTimeNs: ts, maxLatenessNs: 0, threads: threads.length, eventTypes: SYNTH_TYPES.length });
  take('end');
  const bytes = new Uint8Array(pos);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, headerEnd, blocks, events, threads: state };
}

/** A block as the format frames it: kind, flags, reserved, length, CRC-32 (of those and the payload), payload. */
export function rawBlock(kind, payload) {
  const out = new Uint8Array(12 + payload.length);
  const v = new DataView(out.buffer);
  v.setUint8(0, kind);
  v.setUint32(4, payload.length, true);
  out.set(payload, 12);
  v.setUint32(8, blockChecksum(out, payload), true);
  return out;
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `bytes` as an async iterable of chunks of `size` bytes (copies, as a stream would hand them over). */
export async function* chunksOf(bytes, size) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

/** What a reader must say about a run of events: the key that identifies each, in order. */
export const eventKey = (e) => `${e.threadId}:${e.sequence}:${e.timestampNs}`;
