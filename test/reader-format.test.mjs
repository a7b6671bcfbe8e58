// readTrace on intact, versioned, extended and damaged streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineProvider, readTrace, startSession, TraceFormatError } from '../dist/index.js';
import { TraceWriter } from '../dist/format/trace-writer.js';
import { chunksOf, concat, eventKey, headerInfo, rawBlock, SYNTH_TYPES, syntheticTrace } from './helpers/synthetic-trace.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

async function collect(source, options) {
  const trace = readTrace(source, options);
  const events = [];
  for await (const e of trace) events.push(e);
  return { events, outOfOrder: trace.outOfOrder };
}

const comparable = (events) => events.map((e) => ({ key: eventKey(e), provider: e.provider, name: e.name, fields: e.fields }));

const isFormatError = (code, pattern) => (e) => e instanceof TraceFormatError && e.code === code && pattern.test(e.message) && Number.isInteger(e.offset);

test('an intact trace reads back every event with its fields, from a file or an async iterable', async (t) => {
  const trace = syntheticTrace({ seed: 11, batches: 10, perBatch: 12 });
  const file = join(await tempDir(t), 'synthetic.tptrace');
  await writeFile(file, trace.bytes);
  for (const source of [file, chunksOf(trace.bytes, 1), chunksOf(trace.bytes, 4096)]) {
    const { events } = await collect(source);
    assert.deepEqual(comparable(events), comparable(trace.events));
    const tick = events.find((e) => e.name === 'Tick');
    assert.deepEqual([tick.id, tick.version, tick.level], [1, 0, 4], 'id, version and level come from the stream metadata');
  }
});

test('summary counts events, drops per thread, event types and carries the header', async () => {
  const trace = syntheticTrace({ seed: 12, batches: 10, perBatch: 12 });
  const s = await readTrace(chunksOf(trace.bytes, 999)).summary();
  assert.equal(s.complete, true);
  assert.equal(s.error, undefined);
  assert.equal(s.events, trace.events.length);
  let dropped = 0;
  for (const [id, th] of trace.threads) {
    if (th.nextSeq === 0) continue;
    assert.equal(s.threads[id].events, trace.events.filter((e) => e.threadId === id).length);
    assert.equal(s.threads[id].dropped, th.dropped);
    dropped += th.dropped;
  }
  assert.equal(s.dropped, dropped);
  assert.equal(s.drops.reduce((n, d) => n + d.count, 0), dropped, 'drop ranges add up');
  for (const d of s.drops) assert.ok(d.fromSeq <= d.toSeq && d.count === d.toSeq - d.fromSeq + 1);
  const byEvent = {};
  for (const e of trace.events) byEvent[`${e.provider}/${e.name}`] = (byEvent[`${e.provider}/${e.name}`] ?? 0) + 1;
  assert.deepEqual(s.byEvent, byEvent);
  assert.equal(s.eventTypes, SYNTH_TYPES.length);
  assert.deepEqual({ ...s.header, formatMajor: undefined, formatMinor: undefined }, { ...headerInfo(), formatMajor: undefined, formatMinor: undefined });
  assert.deepEqual([s.header.formatMajor, s.header.formatMinor], [1, 2]);
  assert.equal(s.bytes, trace.bytes.length);
  assert.equal(s.durationNs, trace.events.at(-1).timestampNs - trace.events[0].timestampNs);
});

test('a newer major format version is refused with a clear message', async (t) => {
  const bytes = syntheticTrace({ seed: 13 }).bytes.slice();
  new DataView(bytes.buffer).setUint16(8, 2, true);
  const file = join(await tempDir(t), 'future.tptrace');
  await writeFile(file, bytes);
  const refused = isFormatError('unsupported-version', /^trace format 2\.\d+ is newer than this reader supports \(1\.x\); upgrade tracepipe$/);
  for (const source of [() => file, () => chunksOf(bytes, 64)]) {
    await assert.rejects(collect(source()), refused);
    await assert.rejects(readTrace(source()).summary(), refused);
  }
  // Even when the stream ends right after the version.
  await assert.rejects(collect(chunksOf(bytes.slice(0, 12), 5)), refused);
});

test('a file that is not a trace, an empty file and a missing file are told apart', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'text.txt'), 'hello, this is not a trace at all\n');
  await writeFile(join(dir, 'empty.tptrace'), '');
  await assert.rejects(collect(join(dir, 'text.txt')), isFormatError('not-a-trace', /bad magic number/));
  await assert.rejects(readTrace(join(dir, 'text.txt')).summary(), isFormatError('not-a-trace', /bad magic/));
  await assert.rejects(collect(join(dir, 'empty.tptrace')), isFormatError('not-a-trace', /the file is empty/));
  await assert.rejects(collect(join(dir, 'nope.tptrace')), isFormatError('io', /^no such file: .*nope\.tptrace$/));
  await assert.rejects(readTrace(join(dir, 'nope.tptrace')).summary(), isFormatError('io', /no such file/));
});

test('blocks of unknown kinds are skipped wherever they appear', async () => {
  const trace = syntheticTrace({ seed: 14, batches: 6 });
  const { bytes, headerEnd, blocks } = trace;
  const unknown = (kind, n) => rawBlock(kind, Uint8Array.from({ length: n }, (_, i) => (i * 37) & 255));
  const parts = [bytes.slice(0, headerEnd), unknown(9, 0)];
  for (const [i, b] of blocks.entries()) {
    parts.push(bytes.slice(b.start, b.end));
    if (i % 2 === 0 && b.kind !== 'end') parts.push(unknown(20 + i, 100 + i), unknown(255, 3));
  }
  const extended = concat(...parts);
  assert.ok(extended.length > bytes.length);
  const { events } = await collect(chunksOf(extended, 77));
  assert.deepEqual(comparable(events), comparable(trace.events));
  const s = await readTrace(chunksOf(extended, 77)).summary();
  const plain = await readTrace(chunksOf(bytes, 77)).summary();
  assert.equal(s.complete, true);
  assert.deepEqual([s.events, s.dropped, s.threads, s.byEvent], [plain.events, plain.dropped, plain.threads, plain.byEvent]);
});

test('damage after intact blocks: every earlier event, then a corrupt error at the damaged block', async () => {
  const trace = syntheticTrace({ seed: 15, batches: 6 });
  const { bytes, blocks } = trace;
  const lastEvents = blocks.filter((b) => b.kind === 'events').at(-1);
  const before = trace.events.slice(0, trace.events.length - lastEvents.events);
  const expectCorrupt = async (damaged, offset, pattern, wantEvents) => {
    const events = [];
    await assert.rejects(
      (async () => {
        for await (const e of readTrace(chunksOf(damaged, 100))) events.push(e);
      })(),
      (e) => isFormatError('corrupt', pattern)(e) && e.offset === offset,
    );
    assert.deepEqual(comparable(events), comparable(wantEvents));
    const s = await readTrace(chunksOf(damaged, 100)).summary();
    assert.deepEqual([s.complete, s.events, s.error.code, s.error.offset], [false, wantEvents.length, 'corrupt', offset]);
  };
  const flipped = bytes.slice();
  flipped[lastEvents.end - 1] ^= 0x10;
  await expectCorrupt(flipped, lastEvents.start, /checksum mismatch/, before);
  const kindZero = bytes.slice();
  kindZero[lastEvents.start] = 0;
  await expectCorrupt(kindZero, lastEvents.start, /implausible block \(kind 0/, before);
  const huge = bytes.slice();
  new DataView(huge.buffer).setUint32(lastEvents.start + 4, 0x7fffffff, true);
  await expectCorrupt(huge, lastEvents.start, /implausible block/, before);
  const trailing = concat(bytes, rawBlock(2, new Uint8Array(4)));
  await expectCorrupt(trailing, bytes.length, /data after the end-of-stream block/, trace.events);
});

test('events come out in timestamp order within the reorder window; later ones are delivered and counted', async () => {
  const w = new TraceWriter();
  const parts = [];
  const take = () => parts.push(w.take().slice());
  w.header(headerInfo());
  w.metadata(1, SYNTH_TYPES[1].d);
  const blob = new Uint8Array(5); // ok=false, data of length 0
  const ev = (thread, seq, ts) => w.event(1, thread, seq, ts, blob, 0, blob.length);
  ev(1, 0, 100);
  ev(1, 1, 200);
  take();
  w.sequencePoint(300, 120, [{ threadId: 1, nextSeq: 2, dropped: 0 }]);
  ev(2, 0, 180); // written late: 120 ns before the sequence point at 300
  ev(2, 1, 400);
  w.sequencePoint(500, 120, [{ threadId: 1, nextSeq: 2, dropped: 0 }, { threadId: 2, nextSeq: 2, dropped: 0 }]);
  w.end({ events: 4, dropped: 0, endTimeNs: 500, maxLatenessNs: 120, threads: 2, eventTypes: 1 });
  take();
  const bytes = concat(...parts);
  const ts = (r) => r.events.map((e) => e.timestampNs);

  const inWindow = await collect(chunksOf(bytes, 16), { reorderWindowNs: 150 });
  assert.deepEqual(ts(inWindow), [100, 180, 200, 400]);
  assert.equal(inWindow.outOfOrder, 0);

  const narrow = await collect(chunksOf(bytes, 16), { reorderWindowNs: 50 });
  assert.deepEqual(ts(narrow), [100, 200, 180, 400], 'a later-than-window event is still delivered');
  assert.equal(narrow.outOfOrder, 1);
});

test('truncating a real session file yields a prefix of its events and says where it broke', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'real.tptrace');
  const p = defineProvider('Reader.Real', { events: { Step: { id: 1, fields: [['i', 'u32'], ['name', 'string'], ['v', 'f64']] } } });
  const s = await startSession({ providers: 'Reader.Real', output: file, bufferSizeMB: 4 });
  for (let i = 0; i < 3000; i++) {
    p.Step.write(i, `step-${i}`, i / 3);
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 120)); // several drain passes, so several blocks
  }
  const result = await s.stop();
  assert.equal(result.eventsDropped, 0);
  const { readFile } = await import('node:fs/promises');
  const bytes = new Uint8Array(await readFile(file));
  const full = (await collect(file)).events;
  assert.equal(full.length, 3000);
  assert.deepEqual(full.map((e) => e.fields.i), [...Array(3000).keys()]);
  let lastCount = -1;
  for (let k = 1; k <= 25; k++) {
    const cut = Math.floor((bytes.length * k) / 26);
    const events = [];
    let error;
    try {
      for await (const e of readTrace(chunksOf(bytes.slice(0, cut), 8192))) events.push(e);
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof TraceFormatError && error.code === 'truncated' && error.offset <= cut, `cut at ${cut}: ${error}`);
    assert.deepEqual(events.map(eventKey), full.slice(0, events.length).map(eventKey), `cut at ${cut}: a prefix`);
    assert.ok(events.length >= lastCount, 'a longer file never yields fewer events');
    lastCount = events.length;
    const sum = await readTrace(chunksOf(bytes.slice(0, cut), 8192)).summary();
    assert.deepEqual([sum.events, sum.complete, sum.error.offset], [events.length, false, error.offset]);
  }
  assert.ok(lastCount > 0 && lastCount < 3000);
});

test('a damaged block in the middle is skipped: the intact blocks after it are read too, then the damage is reported', async () => {
  const trace = syntheticTrace({ seed: 16, batches: 6 });
  const eventBlocks = trace.blocks.filter((b) => b.kind === 'events');
  assert.ok(eventBlocks.length >= 3, 'the synthetic trace has several events blocks');
  const victim = eventBlocks[1];
  const damaged = trace.bytes.slice();
  damaged[victim.end - 1] ^= 0x01;
  const events = [];
  await assert.rejects(
    (async () => {
      for await (const e of readTrace(chunksOf(damaged, 97))) events.push(e);
    })(),
    (e) => isFormatError('corrupt', /checksum mismatch/)(e) && e.offset === victim.start,
  );
  const start = eventBlocks.slice(0, 1).reduce((n, b) => n + b.events, 0);
  const want = [...trace.events.slice(0, start), ...trace.events.slice(start + victim.events)];
  assert.deepEqual(comparable(events), comparable(want));
  const s = await readTrace(chunksOf(damaged, 97)).summary();
  assert.deepEqual([s.complete, s.events, s.error.offset], [false, want.length, victim.start]);
});

test('an OTLP-export block (format 1.2) is the summary’s otlp: counts a later version appends are skipped, a missing one is 0, a damaged one is an error', async () => {
  const trace = syntheticTrace({ seed: 15, batches: 3 });
  const { bytes, blocks } = trace;
  const end = blocks.at(-1);
  assert.equal(end.kind, 'end');
  const withBlock = (counts) => concat(bytes.slice(0, end.start), rawBlock(6, Uint8Array.from([counts.length, ...counts])), bytes.slice(end.start));
  const summary = (b) => readTrace(chunksOf(b, 64)).summary();
  assert.equal((await summary(bytes)).otlp, undefined);
  const stats = { requestsSent: 3, requestsDropped: 4, itemsSent: 5, itemsDropped: 6, spansSent: 7, spansDropped: 8 };
  assert.deepEqual((await summary(withBlock([3, 4, 5, 6, 7, 8, 99]))).otlp, stats);
  assert.deepEqual((await summary(withBlock([3, 4, 5, 6, 7]))).otlp, { ...stats, spansDropped: 0 });
  const s = await summary(concat(bytes.slice(0, end.start), rawBlock(6, Uint8Array.from([1, 2, 3])), bytes.slice(end.start)));
  assert.match(s.error?.message ?? '', /trailing bytes in an OTLP-export block/);
});
