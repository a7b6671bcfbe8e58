// Writes a trace of spans only (`Bench.Spans/Req.Begin` and `.End`), with TraceWriter and no session,
// in a chosen mix: spans that never end, requests with nested children that end in any order. For
// the tools' cost on span-heavy traces (convert's lanes, report's span table), which a live app
// cannot produce at will.
import { closeSync, openSync, writeSync } from 'node:fs';
import { TraceWriter } from '../../dist/format/trace-writer.js';
import { seededRandom } from '../../test/helpers/seeded-random.mjs';

const BEGIN = { provider: 'Bench.Spans', name: 'Req.Begin', id: 1, version: 0, level: 4, keywords: 0n, fields: [['spanId', 'u64'], ['parentSpanId', 'u64']] };
const END = { provider: 'Bench.Spans', name: 'Req.End', id: 2, version: 0, level: 4, keywords: 0n, fields: [['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string']] };

/**
 * Writes `file` and resolves with its counts. `open`: root spans begun and never ended, spread over
 * the trace; `requests`: root spans each with 1–4 children (some with a child of their own), where
 * about one in eight parents ends before its children and one child in twenty never ends, so lanes
 * must move spans. All on thread 0, 1 µs apart.
 */
export function writeSpanTrace(file, { open = 0, requests = 0, seed = 1 } = {}) {
  const rnd = seededRandom(seed);
  const fd = openSync(file, 'w');
  const w = new TraceWriter();
  const flush = () => {
    const b = w.take();
    if (b) writeSync(fd, b);
  };
  w.header({
    pid: 4242, processTitle: 'span-trace', argv: ['node', 'span-trace.mjs'], execArgv: [], nodeVersion: process.version, tracepipeVersion: '0.0.0-bench',
    platform: process.platform, arch: process.arch, hostname: 'bench', clock: { wallClockNs: '1700000000000000000', monotonicNs: '5000' },
    session: { id: 1, providers: 'Bench.Spans', bufferingMode: 'drop', bufferSizeMB: 1 },
  });
  w.metadata(1, BEGIN);
  w.metadata(2, END);
  const begin = new Uint8Array(16);
  const beginView = new DataView(begin.buffer);
  const end = new Uint8Array(16);
  const endView = new DataView(end.buffer);
  let seq = 0;
  let ts = 1000;
  let nextId = 1n;
  let events = 0;
  const emitBegin = (parent) => {
    const id = nextId++;
    beginView.setBigUint64(0, id, true);
    beginView.setBigUint64(8, parent, true);
    w.event(1, 0, seq++, (ts += 1000), begin, 0, 16);
    events++;
    return id;
  };
  const emitEnd = (id) => {
    endView.setBigUint64(0, id, true);
    endView.setUint32(8, 0, true);
    endView.setUint8(12, 0);
    w.event(2, 0, seq++, (ts += 1000), end, 0, 13);
    events++;
  };
  let unended = 0;
  let leftOpen = open;
  let leftRequests = requests;
  for (let i = 0; leftOpen + leftRequests > 0; i++) {
    // Never-ended spans spread evenly among the requests.
    if (rnd() * (leftOpen + leftRequests) < leftOpen) {
      emitBegin(0n);
      leftOpen--;
      unended++;
    } else {
      leftRequests--;
      const root = emitBegin(0n);
      const children = [];
      for (let c = 1 + Math.floor(rnd() * 4); c > 0; c--) {
        const child = emitBegin(root);
        children.push(child);
        if (rnd() < 0.3) children.push(emitBegin(child));
      }
      const parentFirst = rnd() < 0.125;
      if (parentFirst) emitEnd(root);
      for (const child of children.reverse()) {
        if (rnd() < 0.05) unended++;
        else emitEnd(child);
      }
      if (!parentFirst) emitEnd(root);
    }
    if (i % 4096 === 4095) flush();
  }
  w.sequencePoint(ts, 0, [{ threadId: 0, nextSeq: seq, dropped: 0 }]);
  w.end({ events, dropped: 0, endTimeNs: ts, maxLatenessNs: 0, threads: 1, eventTypes: 2 });
  flush();
  closeSync(fd);
  return { events, unended };
}
