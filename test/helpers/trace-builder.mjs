// A trace file with exactly the events a test names, built with TraceWriter (no session, no threads):
// for tests whose answer must be known in advance (a join, a chart's data).
import { writeFile } from 'node:fs/promises';
import { TraceWriter } from '../../dist/format/trace-writer.js';
import { generateWriter } from '../../dist/schema/event-writer.js';
import { computePayloadLayout } from '../../dist/schema/payload-layout.js';
import { fakeRecordTarget, recordAt0 } from './fake-record-target.mjs';
import { headerInfo } from './synthetic-trace.mjs';

/**
 * Writes `file`: the metadata of each event descriptor in `types` (a provider's event objects are
 * descriptors), then `events` in order, each `{ type, threadId, sequence, timestampNs, values }`
 * (values positional, in field order). A gap in a thread's sequence numbers is a drop;
 * `finalSeq` (threadId → next sequence number) adds drops after a thread's last event; `header`
 * replaces the stream header's process information (headerInfo()).
 * Resolves with the events per type key and the drop ranges, as a reader must report them.
 */
export async function writeTrace(file, types, events, { finalSeq = {}, header = headerInfo() } = {}) {
  const w = new TraceWriter();
  const parts = [];
  const take = () => {
    const b = w.take();
    if (b) parts.push(b.slice());
  };
  w.header(header);
  const ids = new Map(types.map((d, i) => [d, i + 1]));
  const writers = new Map(types.map((d) => [d, generateWriter(computePayloadLayout(d.fields), 1, { now: () => 0 }, false, (k, v) => { throw new Error(`${d.name}: field ${k} refused ${String(v)}`); })]));
  for (const [d, id] of ids) w.metadata(id, d);
  take();
  const next = new Map();
  const drops = [];
  const byKey = {};
  const target = fakeRecordTarget(1 << 16);
  let lastTs = 0;
  for (const e of events) {
    const expected = next.get(e.threadId) ?? 0;
    if (e.sequence > expected) drops.push({ threadId: e.threadId, fromSeq: expected, toSeq: e.sequence - 1, count: e.sequence - expected });
    next.set(e.threadId, e.sequence + 1);
    writers.get(e.type).call({ _targets: [target] }, ...e.values);
    const r = recordAt0(target);
    w.event(ids.get(e.type), e.threadId, e.sequence, e.timestampNs, target.u8, r.payloadStart, r.payloadLength);
    const key = `${e.type.provider}/${e.type.name}`;
    byKey[key] = (byKey[key] ?? 0) + 1;
    lastTs = Math.max(lastTs, e.timestampNs);
  }
  for (const [t, seq] of Object.entries(finalSeq)) {
    const threadId = Number(t);
    const expected = next.get(threadId) ?? 0;
    if (seq > expected) drops.push({ threadId, fromSeq: expected, toSeq: seq - 1, count: seq - expected });
    next.set(threadId, Math.max(seq, expected));
  }
  const threads = [...next].map(([threadId, nextSeq]) => ({ threadId, nextSeq, dropped: 0 }));
  w.sequencePoint(lastTs, 0, threads);
  const dropped = drops.reduce((n, d) => n + d.count, 0);
  w.end({ events: events.length, dropped, endTimeNs: lastTs, maxLatenessNs: 0, threads: threads.length, eventTypes: types.length });
  take();
  await writeFile(file, Buffer.concat(parts));
  return { byKey, drops, dropped };
}
