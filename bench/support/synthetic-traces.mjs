// Traces a live app cannot produce at will, written with TraceWriter and no session, for the tools'
// cost on them: spans in a chosen mix (convert's lanes, report's span table), thousands of event
// types (a file or table per type), thousands of threads (a stream file per thread).
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
  const { w, flush, close } = traceFile(file, 'Bench.Spans');
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
  close();
  return { events, unended };
}

/** A trace file being written: its header, then whatever the caller writes; `close` writes the rest out. */
function traceFile(file, providers) {
  const fd = openSync(file, 'w');
  const w = new TraceWriter();
  const flush = () => {
    const b = w.take();
    if (b) writeSync(fd, b);
  };
  w.header({
    pid: 4242, processTitle: 'synthetic', argv: ['node', 'synthetic-traces.mjs'], execArgv: [], nodeVersion: process.version, tracepipeVersion: '0.0.0-bench',
    platform: process.platform, arch: process.arch, hostname: 'bench', clock: { wallClockNs: '1700000000000000000', monotonicNs: '5000' },
    session: { id: 1, providers, bufferingMode: 'drop', bufferSizeMB: 1 },
  });
  return { w, flush, close: () => (flush(), closeSync(fd)) };
}

/**
 * `types` event types (`Bench.Types/Event<i>`, one u32 field) on `threads` threads, `perType` events
 * each: every type visited in turn, each time on the next thread, 1 µs apart.
 */
export function writeTypesTrace(file, { types, threads = 1, perType = 1 }) {
  const { w, flush, close } = traceFile(file, 'Bench.Types');
  for (let i = 0; i < types; i++) w.metadata(i + 1, { provider: 'Bench.Types', name: `Event${i}`, id: i, version: 0, level: 4, keywords: 0n, fields: [['n', 'u32']] });
  const payload = new Uint8Array(4);
  const view = new DataView(payload.buffer);
  const seq = new Array(threads).fill(0);
  let events = 0;
  for (let round = 0; round < perType; round++) {
    for (let i = 0; i < types; i++) {
      const thread = events % threads;
      view.setUint32(0, events, true);
      w.event(i + 1, thread, seq[thread]++, 1000 * ++events, payload, 0, 4);
      if (events % 4096 === 0) flush();
    }
  }
  w.sequencePoint(1000 * events, 0, seq.map((nextSeq, threadId) => ({ threadId, nextSeq, dropped: 0 })));
  w.end({ events, dropped: 0, endTimeNs: 1000 * events, maxLatenessNs: 0, threads, eventTypes: types });
  close();
  return { events };
}

/**
 * A server's trace for explain, written in time order with the runtime providers' own event types
 * (their payloads encoded by the generated writers): `events` events or a few more, over events/10
 * ms. Two threads, each serving Node.Channels/HttpServer requests (about 2 a ms in all, lengths
 * log-normal, a few seconds at most, each with a Fetch child over most of it) and sampled every 1 ms
 * by Runtime.CpuSampler (40 frames and 80 stacks, defined again every 5 s as the provider does); a
 * scavenge every ~20 ms and a mark-compact every ~2 s per thread; a main-thread stall of 100–400 ms
 * every ~3 s, written by the watchdog (thread 2).
 */
export async function writeExplainTrace(file, { events: wanted, seed = 1 }) {
  const { nodeChannels, runtimeCpuSampler, runtimeEventLoop, runtimeGC } = await import('../../dist/index.js');
  const { generateWriter } = await import('../../dist/schema/event-writer.js');
  const { computePayloadLayout } = await import('../../dist/schema/payload-layout.js');
  const { fakeRecordTarget, recordAt0 } = await import('../../test/helpers/fake-record-target.mjs');
  const rnd = seededRandom(seed);
  const { Frame, Stack, Sample, SamplerStarted } = runtimeCpuSampler;
  const types = [nodeChannels.HttpServer.beginType, nodeChannels.HttpServer.endType, nodeChannels.Fetch.beginType, nodeChannels.Fetch.endType, runtimeGC.GCPause, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd, Frame, Stack, Sample, SamplerStarted];
  const { w, flush, close } = traceFile(file, 'Node.Channels:0x10,Runtime.GC,Runtime.EventLoop,Runtime.CpuSampler');
  const target = fakeRecordTarget(1 << 16);
  const writers = new Map();
  types.forEach((d, i) => {
    w.metadata(i + 1, d);
    writers.set(d, { id: i + 1, write: generateWriter(computePayloadLayout(d.fields), 1, { now: () => 0 }, false, (k) => { throw new Error(`${d.name}: ${k}`); }) });
  });
  const seq = [0, 0, 0];
  let written = 0;
  let ts = 0;
  const emit = (type, thread, ...values) => {
    const t = writers.get(type);
    t.write.call({ _targets: [target] }, ...values);
    const r = recordAt0(target);
    w.event(t.id, thread, seq[thread]++, (ts += 1000), target.u8, r.payloadStart, r.payloadLength);
    if (++written % 4096 === 0) flush();
  };
  const define = (writer) => {
    for (let f = 1; f <= 40; f++) emit(Frame, writer, f, `handler${f}`, `file:///srv/app/route${f % 8}.js`, 10 * f, 3);
    for (let s = 1; s <= 80; s++) emit(Stack, writer, s, 1 + (s % 40), s > 40 ? s - 40 : 0);
  };
  const durationMs = Math.ceil(wanted / 10);
  /** Ends due at each ms, for requests that began earlier: [ms] → [thread, root id, child id]. */
  const due = new Map();
  let nextId = 1n;
  let stallEnd = -1;
  let nextStall = 3000;
  for (const thread of [0, 1]) emit(SamplerStarted, thread, thread, 1000, 'native');
  for (let ms = 0; ms < durationMs; ms++) {
    ts = ms * 1e6;
    if (ms % 5000 === 0) for (const writer of [0, 1]) define(writer);
    for (const [thread, root, child] of due.get(ms) ?? []) {
      emit(nodeChannels.Fetch.endType, thread, child, false, '', 200, 512);
      emit(nodeChannels.HttpServer.endType, thread, root, false, '', 200, 2048);
    }
    due.delete(ms);
    // About 2 requests a ms: 0–4 of them, each on one of the two threads.
    for (let n = Math.floor(rnd() * 5); n > 0; n--) {
      const thread = rnd() < 0.5 ? 0 : 1;
      const root = nextId++;
      const child = nextId++;
      emit(nodeChannels.HttpServer.beginType, thread, root, 0n, 'GET', `/items/${root}`);
      emit(nodeChannels.Fetch.beginType, thread, child, root, 'GET', 'http://db.internal', `/query/${child}`);
      // Log-normal lengths: a few ms typically, seconds rarely (at most 3 s).
      const length = Math.min(3000, 1 + Math.round(Math.exp(1.2 + 1.1 * Math.sqrt(-2 * Math.log(rnd() || 1e-9)) * Math.cos(2 * Math.PI * rnd()))));
      const end = ms + length;
      if (!due.has(end)) due.set(end, []);
      due.get(end).push([thread, root, child]);
    }
    for (const thread of [0, 1]) {
      if (rnd() < 0.05) emit(runtimeGC.GCPause, thread, BigInt(Math.round(3e5 + rnd() * 2e6)), 'scavenge', 0, 5e7, thread, 0);
      if (rnd() < 0.0005) emit(runtimeGC.GCPause, thread, BigInt(Math.round(2e7 + rnd() * 6e7)), 'mark-compact', 0, 4e7, thread, 0);
      emit(Sample, thread, 1 + Math.floor(rnd() * 80), thread);
    }
    if (ms === nextStall) stallEnd = ms + 100 + Math.floor(rnd() * 300);
    if (ms === nextStall + 100) emit(runtimeEventLoop.StallStart, 2, 0, 100);
    if (ms === stallEnd) {
      emit(runtimeEventLoop.StallEnd, 2, 0, stallEnd - nextStall);
      nextStall = ms + 2000 + Math.floor(rnd() * 2000);
    }
  }
  // Requests still open at the end stay unfinished, as in a trace stopped while serving.
  w.sequencePoint(ts, 0, seq.map((nextSeq, threadId) => ({ threadId, nextSeq, dropped: 0 })));
  w.end({ events: written, dropped: 0, endTimeNs: ts, maxLatenessNs: 0, threads: 3, eventTypes: types.length });
  close();
  return { events: written };
}

const SAMPLER_TYPES = [
  { provider: 'Runtime.CpuSampler', name: 'Frame', id: 1, version: 0, level: 4, keywords: 0n, fields: [['frameId', 'u32'], ['functionName', 'string'], ['url', 'string'], ['line', 'u32'], ['column', 'u32']] },
  { provider: 'Runtime.CpuSampler', name: 'Stack', id: 2, version: 0, level: 4, keywords: 0n, fields: [['stackId', 'u32'], ['frameId', 'u32'], ['parentId', 'u32']] },
  { provider: 'Runtime.CpuSampler', name: 'Sample', id: 3, version: 0, level: 4, keywords: 0n, fields: [['stackId', 'u32'], ['thread', 'u32']] },
  { provider: 'Runtime.CpuSampler', name: 'SamplerStarted', id: 4, version: 0, level: 4, keywords: 0n, fields: [['thread', 'u32'], ['intervalUs', 'u32'], ['route', 'string']] },
];

/**
 * CPU samples as Runtime.CpuSampler writes them (docs/FORMAT.md, "CPU samples"): `samples` samples
 * 1 ms apart on each of `threads` threads, each thread writing its own; `stacks` distinct stacks per
 * thread, paths of up to `depth` frames through a tree of 1,000 functions in 50 scripts, picked
 * skewed (a few hot stacks, a long tail). Frames and stacks are defined before first use, and again
 * every 5 s of samples, as the sampler writes them again.
 */
export function writeSampleTrace(file, { samples, threads = 1, stacks = 5_000, depth = 30, seed = 1 }) {
  const rnd = seededRandom(seed);
  const { w, flush, close } = traceFile(file, 'Runtime.CpuSampler');
  SAMPLER_TYPES.forEach((t, i) => w.metadata(i + 1, t));
  const enc = new TextEncoder();
  const buf = new Uint8Array(256);
  const view = new DataView(buf.buffer);
  // A stack is a path of frame ids (the outermost first); stack k extends a shorter one, so they share prefixes.
  const paths = [[1]];
  while (paths.length < stacks) {
    const base = paths[Math.floor(rnd() * paths.length)];
    paths.push(base.length < depth ? [...base, 1 + Math.floor(rnd() * 1000)] : [...base.slice(0, depth - 1), 1 + Math.floor(rnd() * 1000)]);
  }
  const seq = new Array(threads).fill(0);
  let events = 0;
  const emit = (typeId, thread, ts, length) => {
    w.event(typeId, thread, seq[thread]++, ts, buf, 0, length);
    events++;
  };
  const u32s = (...v) => v.forEach((x, i) => view.setUint32(i * 4, x, true));
  for (let thread = 0; thread < threads; thread++) {
    view.setUint32(0, thread, true);
    view.setUint32(4, 1000, true);
    view.setUint32(8, 4, true);
    buf.set(enc.encode('test'), 12);
    emit(4, thread, 1000, 16);
  }
  let defined = new Array(threads).fill(null);
  for (let i = 0; i < samples; i++) {
    if (i % 5000 === 0) defined = defined.map(() => ({ frames: new Set(), stacks: new Map() }));
    for (let thread = 0; thread < threads; thread++) {
      const ts = 1_000_000 + i * 1_000_000 + thread * 1000;
      const d = defined[thread];
      const path = paths[Math.floor(paths.length * rnd() ** 3)];
      let parent = 0;
      for (let k = 0; k < path.length; k++) {
        const frame = path[k];
        if (!d.frames.has(frame)) {
          d.frames.add(frame);
          const name = enc.encode(`fn${frame}`);
          const url = enc.encode(`file:///app/lib/module${frame % 50}.js`);
          // The fixed part (frameId, the two strings' lengths, line, column), then the strings' bytes.
          u32s(frame, name.length, url.length, 10 + frame, 1 + (frame % 80));
          buf.set(name, 20);
          buf.set(url, 20 + name.length);
          emit(1, thread, ts, 20 + name.length + url.length);
        }
        const key = `${parent}:${frame}`;
        let id = d.stacks.get(key);
        if (id === undefined) {
          id = d.stacks.size + 1;
          d.stacks.set(key, id);
          u32s(id, frame, parent);
          emit(2, thread, ts, 12);
        }
        parent = id;
      }
      u32s(parent, thread);
      emit(3, thread, ts, 8);
    }
    if (i % 4096 === 4095) flush();
  }
  const endTs = 1_000_000 + samples * 1_000_000;
  w.sequencePoint(endTs, 0, seq.map((nextSeq, threadId) => ({ threadId, nextSeq, dropped: 0 })));
  w.end({ events, dropped: 0, endTimeNs: endTs, maxLatenessNs: 0, threads, eventTypes: SAMPLER_TYPES.length });
  close();
  return { events };
}
