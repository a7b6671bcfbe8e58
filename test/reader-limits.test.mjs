// What a reader refuses to hold (reader-limits.ts, definition-limits.ts), the header it refuses to
// trust, a hostile end-of-stream lateness, a field named __proto__, and the bounded reorder window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { defineProvider, readTrace, startSession, TraceFormatError } from '../dist/index.js';
import { ByteWriter } from '../dist/format/byte-writer.js';
import { MAX_EVENT_PAYLOAD, MAX_EVENT_TYPES, MAX_FIELDS_IN_ALL_TYPES, MAX_THREADS } from '../dist/format/reader-limits.js';
import { PayloadArena } from '../dist/format/payload-arena.js';
import { payloadDecoder } from '../dist/format/payload-codec.js';
import { ReorderWindow } from '../dist/format/reorder-window.js';
import { encodeHeader } from '../dist/format/stream-header.js';
import { TraceParser } from '../dist/format/trace-parser.js';
import { TraceWriter } from '../dist/format/trace-writer.js';
import { MAX_FIELDS_PER_EVENT, MAX_NAME_BYTES } from '../dist/schema/definition-limits.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';
import { chunksOf, concat, eventKey, headerInfo, prng, rawBlock, syntheticTrace } from './helpers/synthetic-trace.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const run = promisify(execFile);
const cli = (...args) => run(process.execPath, [CLI, ...args]).then((r) => ({ code: 0, ...r }), (e) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }));

const type = (name, fields, provider = 'Limits.App') => ({ provider, name, id: 1, version: 0, level: 4, keywords: 0n, fields });

/** A trace written with TraceWriter: `build(w)` adds metadata and events; the end block is added unless it returns false. */
function traceOf(build, end = {}) {
  const w = new TraceWriter();
  const parts = [];
  const take = () => {
    const b = w.take();
    if (b) parts.push(b.slice());
  };
  w.header(headerInfo());
  const ended = build(w, take);
  if (ended !== false) w.end({ events: 0, dropped: 0, endTimeNs: 0, maxLatenessNs: 0, threads: 0, eventTypes: 0, ...end });
  take();
  return concat(...parts);
}

async function readAll(source, options) {
  const trace = readTrace(source, options);
  const events = [];
  try {
    for await (const e of trace) events.push(e);
    return { events, outOfOrder: trace.outOfOrder };
  } catch (error) {
    return { events, outOfOrder: trace.outOfOrder, error };
  }
}

const isLimit = (pattern) => (e) => e instanceof TraceFormatError && e.code === 'limit' && pattern.test(e.message) && Number.isInteger(e.offset);

test('a header without argv, or with a field of the wrong type, is a corrupt trace: one clear line from readTrace, stats and dump', async (t) => {
  const dir = await tempDir(t);
  const withHeader = (info) => {
    const out = new ByteWriter();
    encodeHeader(info, out);
    const rest = traceOf(() => {});
    return concat(out.take(), rest.subarray(headerLength(rest)));
  };
  const { argv: _argv, ...noArgv } = headerInfo();
  const cases = [
    [noArgv, /^corrupt trace: header has no 'argv'$/],
    [{ ...headerInfo(), argv: 'node app.js' }, /^corrupt trace: header 'argv' is not a list of strings$/],
    [{ ...headerInfo(), session: { id: 1 } }, /^corrupt trace: header 'session' is not an object with id, providers, bufferingMode and bufferSizeMB$/],
    [{ ...headerInfo(), clock: { wallClockNs: 5, monotonicNs: '1' } }, /^corrupt trace: header 'clock' is not/],
  ];
  for (const [i, [info, message]] of cases.entries()) {
    const file = join(dir, `header-${i}.tptrace`);
    await writeFile(file, withHeader(info));
    const it = await readAll(file);
    assert.ok(it.error instanceof TraceFormatError && it.error.code === 'corrupt' && message.test(it.error.message), String(it.error));
    const s = await readTrace(file).summary();
    assert.deepEqual([s.complete, s.events, s.header, s.error.code], [false, 0, undefined, 'corrupt']);
    assert.match(s.error.message, message);
    for (const tool of ['stats', 'dump']) {
      const r = await cli(tool, file);
      assert.equal(r.code, 1, `${tool}: ${r.stderr}`);
      assert.match(r.stderr, /^tracepipe: corrupt trace: header /);
      assert.equal(r.stderr.split('\n').length, 2, 'one line');
    }
  }
  // An extra key (what a newer minor version may add) is kept.
  const file = join(dir, 'extra.tptrace');
  await writeFile(file, withHeader({ ...headerInfo(), future: { x: 1 } }));
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true);
  assert.deepEqual(s.header.future, { x: 1 });
});

/** Bytes of the header at the start of a trace: 16 + JSON length + 4. */
function headerLength(bytes) {
  return 16 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true) + 4;
}

test('an end-of-stream lateness that is not a number from 0 to 2^53 is ignored: the window falls back to 100 ms', async (t) => {
  const dir = await tempDir(t);
  const ms = 1e6;
  const p = new Uint8Array(5); // Blob: ok=false, no data
  const build = (w) => {
    w.metadata(2, type('Blob', [['ok', 'bool'], ['data', 'bytes']]));
    const ev = (thread, seq, ts) => w.event(2, thread, seq, ts, p, 0, p.length);
    ev(1, 0, 100 * ms);
    ev(1, 1, 200 * ms);
    ev(1, 2, 290 * ms);
    w.sequencePoint(300 * ms, 150 * ms, [{ threadId: 1, nextSeq: 3, dropped: 0 }]);
    ev(2, 0, 150 * ms); // written late: 150 ms before the sequence point
    ev(1, 3, 400 * ms);
    w.sequencePoint(500 * ms, 150 * ms, []);
  };
  const order = async (maxLatenessNs) => {
    const file = join(dir, `late-${String(maxLatenessNs)}.tptrace`);
    await writeFile(file, traceOf(build, { maxLatenessNs }));
    const r = await readAll(file);
    assert.equal(r.error, undefined);
    return [r.events.map((e) => e.timestampNs / ms), r.outOfOrder];
  };
  assert.deepEqual(await order(150 * ms), [[100, 150, 200, 290, 400], 0], 'the recorded lateness puts the late event in place');
  assert.deepEqual(await order(120e9), [[100, 150, 200, 290, 400], 0], 'past 60 s the window is capped, not refused');
  for (const hostile of [NaN, Infinity, -1, 1e300, 2 ** 60]) {
    assert.deepEqual(await order(hostile), [[100, 200, 150, 290, 400], 1], `end-of-stream lateness ${hostile}`);
  }
});

test('readTrace refuses a reorder window that is not a non-negative number', () => {
  for (const bad of [-1, NaN, '5', null]) assert.throws(() => readTrace('x.tptrace', { reorderWindowNs: bad }), RangeError);
});

test('summary() tracks at most MAX_THREADS thread ids; past that it stops with a limit error, readTrace reads on', async () => {
  const trace = (threads) =>
    traceOf((w, take) => {
      w.metadata(1, type('Empty', []));
      for (let i = 0; i < threads; i++) {
        w.event(1, 1000 + i, 0, i, new Uint8Array(0), 0, 0);
        if (i % 4096 === 0) take();
      }
    });
  const atLimit = await readTrace(chunksOf(trace(MAX_THREADS), 65536)).summary();
  assert.equal(atLimit.complete, true);
  assert.equal(Object.keys(atLimit.threads).length, MAX_THREADS);
  const past = trace(MAX_THREADS + 1);
  const s = await readTrace(chunksOf(past, 65536)).summary();
  assert.deepEqual([s.complete, s.error.code, s.events], [false, 'limit', MAX_THREADS]);
  assert.match(s.error.message, new RegExp(`^trace exceeds a reader limit: more than ${MAX_THREADS} threads at byte \\d+$`));
  assert.equal(Object.keys(s.threads).length, MAX_THREADS);
  const it = await readAll(chunksOf(past, 65536));
  assert.equal(it.error, undefined, 'iterating keeps nothing per thread');
  assert.equal(it.events.length, MAX_THREADS + 1);
});

test('a sequence point of more than MAX_THREADS threads is refused', async () => {
  const threads = (n) => Array.from({ length: n }, (_, i) => ({ threadId: i, nextSeq: 0, dropped: 0 }));
  const ok = traceOf((w) => w.sequencePoint(0, 0, threads(MAX_THREADS)));
  assert.equal((await readTrace(chunksOf(ok, 1 << 16)).summary()).complete, true);
  const bad = traceOf((w) => w.sequencePoint(0, 0, threads(MAX_THREADS + 1)));
  assert.ok(isLimit(/a sequence point of 16385 threads/)((await readAll(chunksOf(bad, 1 << 16))).error));
  assert.equal((await readTrace(chunksOf(bad, 1 << 16)).summary()).error.code, 'limit');
});

test('event type definitions, their fields and their names are bounded', async () => {
  const refused = async (bytes, pattern) => {
    const it = await readAll(chunksOf(bytes, 1 << 16));
    assert.ok(isLimit(pattern)(it.error), `${pattern}: ${it.error}`);
    const s = await readTrace(chunksOf(bytes, 1 << 16)).summary();
    assert.equal(s.error?.code, 'limit', String(pattern));
  };
  const accepted = async (bytes) => assert.equal((await readTrace(chunksOf(bytes, 1 << 16)).summary()).complete, true);
  const fields = (n) => Array.from({ length: n }, (_, i) => [`f${i}`, 'u8']);
  const types = (count, perType) => traceOf((w, take) => {
    for (let i = 1; i <= count; i++) {
      w.metadata(i, type(`T${i}`, fields(perType)));
      if (i % 1024 === 0) take();
    }
  });
  await accepted(types(MAX_EVENT_TYPES, 0));
  await refused(types(MAX_EVENT_TYPES + 1, 0), /more than 8192 event types/);
  // Redefining one id over and over counts too: whatever keeps a row per definition stays bounded.
  await refused(traceOf((w) => { for (let i = 0; i <= MAX_EVENT_TYPES; i++) w.metadata(1, type(`Again${i}`, [])); }), /more than 8192 event types/);
  await accepted(types(1, MAX_FIELDS_PER_EVENT));
  await refused(types(1, MAX_FIELDS_PER_EVENT + 1), /an event type with 1025 fields/);
  const widest = MAX_FIELDS_IN_ALL_TYPES / MAX_FIELDS_PER_EVENT;
  await accepted(types(widest, MAX_FIELDS_PER_EVENT));
  await refused(types(widest + 1, MAX_FIELDS_PER_EVENT), /more than 65536 fields in all event types/);
  const long = 'é'.repeat(MAX_NAME_BYTES / 2);
  await accepted(traceOf((w) => w.metadata(1, type(long, [[long, 'u8']], long))));
  await refused(traceOf((w) => w.metadata(1, type(`${long}x`, []))), /a 257-byte name \(at most 256\)/);
  await refused(traceOf((w) => w.metadata(1, type('T', [[`${long}x`, 'u8']]))), /a 257-byte name/);
});

test('an event payload past MAX_EVENT_PAYLOAD is refused; one at it is read', async () => {
  const blob = (n) => {
    const p = new Uint8Array(n);
    new DataView(p.buffer).setUint32(0, n - 4, true);
    return traceOf((w) => {
      w.metadata(1, type('Big', [['data', 'bytes']]));
      w.event(1, 1, 0, 0, p, 0, p.length);
    });
  };
  const ok = await readAll(chunksOf(blob(MAX_EVENT_PAYLOAD), 1 << 16));
  assert.equal(ok.error, undefined);
  assert.equal(ok.events[0].fields.data.length, MAX_EVENT_PAYLOAD - 4);
  const bad = await readAll(chunksOf(blob(MAX_EVENT_PAYLOAD + 1), 1 << 16));
  assert.ok(isLimit(/a 1048577-byte event payload/)(bad.error), String(bad.error));
  assert.equal((await readTrace(chunksOf(blob(MAX_EVENT_PAYLOAD + 1), 1 << 16)).summary()).error.code, 'limit');
});

test('a varint longer than 8 bytes is corrupt', async () => {
  const start = traceOf((w) => {
    w.metadata(1, type('Empty', []));
    return false;
  });
  // Base timestamp 0, then an event whose type id takes 9 bytes.
  const bytes = concat(start, rawBlock(2, Uint8Array.of(0, 3, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 1)));
  const r = await readAll(chunksOf(bytes, 100));
  assert.ok(r.error instanceof TraceFormatError && r.error.code === 'corrupt' && /varint longer than 8 bytes/.test(r.error.message), String(r.error));
});

test('a field named __proto__ (or constructor) is read back as an own property; Object.prototype is untouched', async (t) => {
  const fields = [['__proto__', 'u32'], ['constructor', 'string'], ['data', 'bytes']];
  const layout = computePayloadLayout(fields);
  const p = new Uint8Array(layout.fixedSize + 3 + 2);
  const v = new DataView(p.buffer);
  v.setUint32(layout.fields[0].offset, 42, true);
  v.setUint32(layout.fields[1].offset, 3, true);
  v.setUint32(layout.fields[2].offset, 2, true);
  p.set([0x61, 0x62, 0x63, 7, 9], layout.fixedSize);
  const bytes = traceOf((w) => {
    w.metadata(1, type('Proto', fields));
    w.event(1, 1, 0, 0, p, 0, p.length);
  });
  const { events, error } = await readAll(chunksOf(bytes, 64));
  assert.equal(error, undefined);
  const f = events[0].fields;
  assert.deepEqual(Object.keys(f), ['__proto__', 'constructor', 'data']);
  assert.equal(Object.getOwnPropertyDescriptor(f, '__proto__').value, 42);
  assert.equal(Object.getPrototypeOf(f), Object.prototype, 'the record keeps its prototype');
  assert.equal(f.constructor, 'abc');
  assert.deepEqual([...f.data], [7, 9]);
  assert.equal(Object.prototype.data, undefined);
  assert.equal({}.__proto__, Object.prototype);
  const file = join(await tempDir(t), 'proto.tptrace');
  await writeFile(file, bytes);
  const r = await cli('dump', file, '--format', 'jsonl');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).fields, { ['__proto__']: 42, constructor: 'abc', data: '0709' });
});

test('defineProvider refuses a field named __proto__, names longer than 256 bytes and more than 1,024 fields', () => {
  assert.throws(() => defineProvider('Limits.Proto', { events: { E: { id: 1, fields: [['__proto__', 'u32']] } } }), (e) => e instanceof TypeError && /field named '__proto__'/.test(e.message));
  const long = 'x'.repeat(MAX_NAME_BYTES + 1);
  assert.throws(() => defineProvider(`L${long}`, { events: {} }), (e) => e instanceof TypeError && /provider name .* is 258 bytes of UTF-8; at most 256/.test(e.message));
  assert.throws(() => defineProvider('Limits.LongEvent', { events: { [long]: { id: 1 } } }), /event name in 'Limits.LongEvent' .* is 257 bytes/);
  assert.throws(() => defineProvider('Limits.LongField', { events: { E: { id: 1, fields: [[long, 'u8']] } } }), /field name in 'Limits.LongField\/E' .* is 257 bytes/);
  const many = Array.from({ length: MAX_FIELDS_PER_EVENT + 1 }, (_, i) => [`f${i}`, 'u8']);
  assert.throws(() => defineProvider('Limits.Wide', { events: { E: { id: 1, fields: many } } }), /has 1025 fields; at most 1024/);
  const p = defineProvider('Limits.Widest', { events: { E: { id: 1, fields: many.slice(1) } } });
  assert.equal(p.E.fields.length, MAX_FIELDS_PER_EVENT);
});

test('a span, a counter or a unit whose type or field name would pass 256 bytes is refused where it is defined; at the limit the session records and the trace reads back', async (t) => {
  const n = (k) => 'n'.repeat(k);
  assert.throws(() => defineProvider('Limits.LongSpan', { spans: { [n(251)]: { id: 1 } } }), (e) => e instanceof TypeError && /span name in 'Limits.LongSpan' .* is 251 bytes of UTF-8; at most 250 \(its event types add '.Begin' and '.End'\)/.test(e.message));
  assert.throws(() => defineProvider('Limits.LongCounter', { counters: { [n(249)]: { id: 1 } } }), /counter name in 'Limits.LongCounter' .* is 249 bytes of UTF-8; at most 248/);
  assert.throws(() => defineProvider('Limits.LongUnit', { counters: { C: { id: 1, unit: n(257) } } }), /field name in 'Limits.LongUnit\/C' .* is 257 bytes/);
  assert.throws(() => defineProvider('Limits.ProtoUnit', { counters: { C: { id: 1, unit: '__proto__' } } }), /counter 'Limits.ProtoUnit\/C' has a field named '__proto__'/);
  const p = defineProvider('Limits.AtLimit', { spans: { [n(250)]: { id: 1 } }, counters: { [n(248)]: { id: 2, unit: n(256) } } });
  const file = join(await tempDir(t), 'at-limit.tptrace');
  const s = await startSession({ providers: 'Limits.AtLimit', output: file });
  p[n(250)].run(() => 1);
  p[n(248)].set(3);
  const r = await s.stop();
  assert.equal(r.status, 'stopped');
  const names = [];
  for await (const e of readTrace(file)) names.push([e.name.length, Object.keys(e.fields).map((k) => k.length)]);
  assert.deepEqual(names, [[256, [6, 12]], [254, [6, 5, 9]], [256, [256]]]);
});

/** A window over events of one 0-field type whose payloads are `payloadBytes` long. */
function windowEvents(count, payloadBytes, seed) {
  const rnd = prng(seed);
  const layout = computePayloadLayout([]);
  const t = { typeId: 1, descriptor: type('W', []), layout, decode: payloadDecoder(layout), key: 'Limits.App/W' };
  const payload = { bytes: new Uint8Array(payloadBytes), start: 0, length: 0, offset: 0 };
  return Array.from({ length: count }, (_, i) => ({
    e: { provider: 'Limits.App', name: 'W', id: 1, version: 0, level: 4, timestampNs: rnd.int(1000), threadId: rnd.int(4), sequence: i, fields: {}, type: t },
    payload,
  }));
}

test('ReorderWindow: with room, everything comes out in (timestamp, arrival) order; over budget, the earliest leave early and nothing is lost', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 300 }), (count, seed, slots) => {
      const events = windowEvents(count, 0, seed);
      const budget = 64 * 1024 + 96 * slots; // one payload page, then `slots` events
      const w = new ReorderWindow(Infinity, budget);
      const out = [];
      let maxHeld = 0;
      for (const [i, { e, payload }] of events.entries()) {
        w.push(e, payload);
        maxHeld = Math.max(maxHeld, i + 1 - out.length);
        for (let x = w.next(); x; x = w.next()) out.push(x);
      }
      w.releaseAll();
      for (let x = w.next(); x; x = w.next()) out.push(x);
      assert.ok(maxHeld <= slots + 1, `held ${maxHeld} with room for ${slots}`);
      assert.deepEqual(out.map((x) => x.sequence).sort((a, b) => a - b), events.map(({ e }) => e.sequence), 'each event exactly once');
      const sorted = events.map(({ e }) => e).sort((a, b) => a.timestampNs - b.timestampNs || a.sequence - b.sequence);
      if (count <= slots) assert.deepEqual(out.map((x) => x.sequence), sorted.map((x) => x.sequence), 'in order when it all fits');
    }),
    { seed: 20261122, numRuns: 60 },
  );
});

/** A held payload reads back through its bytes and through its page's view (what payload decoders use). */
function readsBack(arena, h, want) {
  const at = arena.offsetOf(h);
  assert.deepEqual(arena.bytesOf(h).subarray(at, at + want.length), want);
  const view = arena.viewOf(h);
  assert.deepEqual(new Uint8Array(view.buffer, view.byteOffset + at, want.length), want);
}

test('PayloadArena: whatever the sizes (empty, a page exactly, past a page) and the order of frees, each payload reads back intact (bytes and view) and freed pages are reused', () => {
  const size = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 }), fc.constantFrom(65_535, 65_536, 65_537), fc.integer({ min: 1, max: 200_000 }));
  fc.assert(
    fc.property(fc.array(fc.record({ size, freeNow: fc.nat({ max: 4 }) }), { minLength: 1, maxLength: 300 }), (ops) => {
      const arena = new PayloadArena();
      const held = [];
      let peak = 0;
      for (const [i, { size: n, freeNow }] of ops.entries()) {
        // Filled in a loop: Uint8Array.from with a callback took ~4 s of this test for payloads of up to 200,000 bytes.
        const src = new Uint8Array(n + 3);
        for (let k = 0; k < src.length; k++) src[k] = (i * 31 + k) & 255;
        held.push({ h: arena.store(src, 3, n), want: src.subarray(3) });
        peak = Math.max(peak, arena.bytes);
        // Free some of what is held, not in the order it came.
        for (let k = 0; k < freeNow && held.length > 0; k++) {
          const { h, want } = held.splice((i * 7 + k) % held.length, 1)[0];
          readsBack(arena, h, want);
          arena.free(h);
        }
      }
      for (const { h, want } of held) {
        readsBack(arena, h, want);
        arena.free(h);
      }
      assert.ok(arena.bytes <= 64 * 1024, `all freed: at most the page being filled is in use (${arena.bytes})`);
    }),
    { seed: 20261124, numRuns: 150 },
  );
});

test('TraceParser: pausing after any event and resuming gives the same items as reading straight through', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 7 }), (seed, chunk, every) => {
      const { bytes } = syntheticTrace({ seed, batches: 6, perBatch: 10 });
      const items = (pauseEvery) => {
        const seen = [];
        let n = 0;
        const parser = new TraceParser({
          event: (e) => {
            seen.push(`e ${eventKey(e)} ${JSON.stringify(e.fields, (k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
            if (pauseEvery && ++n % pauseEvery === 0) parser.pause();
          },
          sequencePoint: (sp) => {
            seen.push(`s ${sp.timeNs}`);
            if (pauseEvery) parser.pause();
          },
          end: () => seen.push('end'),
        });
        for (let i = 0; i < bytes.length; i += chunk) {
          parser.push(bytes.subarray(i, i + chunk));
          while (parser.paused) {
            seen.push('pause');
            parser.resume();
          }
        }
        parser.finish();
        return seen.filter((s) => s !== 'pause');
      };
      assert.deepEqual(items(every), items(0));
    }),
    { seed: 20261123, numRuns: 100 },
  );
});
