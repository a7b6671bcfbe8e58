// Issue 11: the native addon's C++ transcoder (native/gc-hook/snapshot_transcoder.cc), which turns V8's
// heap snapshot JSON into Runtime.HeapSnapshot's bulk payloads on the addon route, against the
// JavaScript parser of the inspector route (itself checked against JSON.parse in
// heap-snapshot-parser.test.mjs): on the same JSON, cut anywhere, both must make the same calls with
// the same payload bytes, and the same error on broken or hostile input. Strings with every escape,
// surrogate pairs and lone halves, chunk boundaries at every position (every chunk size from 1 up),
// random documents and random damage (fast-check, fixed seed; HEAP_TRANSCODER_SEED replays).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import fc from 'fast-check';
import { SnapshotJsonParser } from '../dist/providers/heap-snapshot/snapshot-json-parser.js';
import { transcoderCallbacks } from '../dist/providers/heap-snapshot/snapshot-stream.js';
import { decodingOutput, recordingOutput, snapshotDocument } from './helpers/snapshot-output.mjs';

const SEED = Number(process.env.HEAP_TRANSCODER_SEED ?? 11_2026_11_24);
const skip = process.env.TRACEPIPE_GC_HOOK === '0' && 'the native addon is turned off (TRACEPIPE_GC_HOOK=0)';
const addon = skip ? undefined : createRequire(import.meta.url)('../native/gc-hook/build/Release/heap_snapshot.node');
const utf8 = new TextEncoder();

/** `bytes` cut into pieces at `cuts` (sorted, deduplicated, inside), or every `size` bytes. */
function pieces(bytes, { size, cuts } = {}) {
  const at = size ? Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size) : [...new Set(cuts ?? [])].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const out = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

/** The C++ transcoder on `chunks`: its calls, error ('' when none) and totals. */
function native(chunks, output = recordingOutput()) {
  const { onHeader, onPayloads, failed } = transcoderCallbacks(output.output, () => true);
  const { error, ...totals } = addon.transcodeJson(chunks, onHeader, onPayloads);
  return { calls: output.calls, error: failed() || error, totals };
}

/** The JavaScript parser on `chunks` (bytes, the addon route's input). */
function javascript(chunks) {
  const { calls, output } = recordingOutput();
  const parser = new SnapshotJsonParser(output);
  for (const c of chunks) parser.push(c);
  parser.finish();
  return { calls, error: parser.error ?? '', totals: parser.totals };
}

/** Both on the same bytes: identical calls, payloads, errors and totals. */
function same(bytes, cutting) {
  const want = javascript([bytes]);
  const got = native(pieces(bytes, cutting));
  assert.equal(got.error, want.error, `error, cut ${JSON.stringify(cutting)}`);
  assert.deepEqual(got.totals, want.totals, `totals, cut ${JSON.stringify(cutting)}`);
  assert.deepEqual(got.calls, want.calls, `calls, cut ${JSON.stringify(cutting)}`);
  return want;
}

const document = (strings, options) => snapshotDocument({ strings, ...options });

/** V8 writes non-ASCII as \u escapes; JSON.stringify writes it raw: both spellings are tested. */
const escapeNonAscii = (text) => text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const ODD_STRINGS = ['', 'plain', 'quote " backslash \\ slash / ', '\b\f\n\r\t\u0001\u001f', 'caf\u00e9 \u4e2d\u6587 \ud83d\ude00', '\ud800 lone \udc00 halves \ud83d', 'x'.repeat(300)];

test("V8's own snapshot of this process: the C++ transcoder writes exactly the JavaScript parser's payloads, however it is cut", { skip }, () => {
  const chunks = [];
  assert.equal(addon.takeHeapSnapshot((c) => void chunks.push(Buffer.from(c))), true);
  const bytes = Buffer.concat(chunks);
  const doc = JSON.parse(bytes.toString('utf8'));
  // V8's own chunks, then sizes that cut numbers, strings and payloads at odd places.
  const want = javascript([bytes]);
  const got = native(chunks);
  assert.equal(got.error, '');
  assert.deepEqual(got.calls, want.calls);
  assert.deepEqual(got.totals, want.totals);
  assert.equal(got.totals.nodes, doc.snapshot.node_count, "V8's declared node count");
  assert.equal(got.totals.edges, doc.snapshot.edge_count, "V8's declared edge count");
  assert.equal(got.totals.strings, doc.strings.length);
  for (const size of [7, 4099, 12 * 1024 + 1, bytes.length]) same(bytes, { size });
  // And decoded, it is what JSON.parse reads.
  const decoded = decodingOutput();
  assert.equal(native(chunks, { calls: [], output: decoded.output }).error, '');
  const r = decoded.result();
  assert.deepEqual(r.nodes, doc.nodes);
  assert.equal(r.edges.length, doc.edges.length);
  assert.deepEqual(r.strings, doc.strings.map((s) => new TextDecoder().decode(utf8.encode(s))));
});

test('odd strings (every escape, surrogate pairs, lone halves), raw and escaped: every chunk size from 1 to the whole document', { skip }, () => {
  for (const text of [document(ODD_STRINGS), escapeNonAscii(document(ODD_STRINGS))]) {
    const bytes = utf8.encode(text);
    const want = same(bytes, { size: bytes.length });
    assert.equal(want.error, '');
    for (let size = 1; size <= bytes.length; size++) same(bytes, { size });
    // Cut in two at every position (a boundary inside each number, escape and UTF-8 sequence).
    for (let at = 1; at < bytes.length; at++) same(bytes, { cuts: [at] });
  }
  // A string longer than a bulk payload, and lengths that end exactly on payload boundaries.
  const long = document(['a', 'x'.repeat(40_000) + '\u00e9'.repeat(5000), 'y'.repeat(12 * 1024 - 3), 'z'.repeat(12 * 1024)]);
  const bytes = utf8.encode(escapeNonAscii(long));
  for (const size of [1, 3, 1000, 12 * 1024, bytes.length]) same(bytes, { size });
});

test('random documents cut at random places: the same payloads (property)', { skip }, () => {
  const aString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 }), fc.constantFrom(...ODD_STRINGS));
  const aNumber = fc.oneof(fc.nat(200), fc.nat(), fc.maxSafeNat());
  fc.assert(
    fc.property(fc.array(aString, { minLength: 1, maxLength: 30 }), fc.array(aNumber, { minLength: 15, maxLength: 15 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 30 }), (strings, n, escaped, cuts) => {
      let text = document(strings, { nodes: `[${n.join(',')}]` });
      if (escaped) text = escapeNonAscii(text);
      const bytes = utf8.encode(text);
      const want = same(bytes, { cuts: cuts.map((c) => c % bytes.length) });
      assert.equal(want.error, '');
    }),
    { seed: SEED, numRuns: 300 },
  );
});

test('random damage to a good document: the same error and the same payloads before it (property)', { skip }, () => {
  const good = utf8.encode(document(ODD_STRINGS, { extra: '"trace_tree":[1,[2,"x]"],3],\n"samples":[],\n' }));
  const aByte = fc.oneof(fc.constantFrom(...utf8.encode('0123456789,[]{}":\\u-. \nabcdefnrtx')), fc.integer({ min: 0, max: 255 }));
  const anEdit = fc.record({ at: fc.nat(), byte: aByte, kind: fc.constantFrom('replace', 'insert', 'delete') });
  let failures = 0;
  fc.assert(
    fc.property(fc.array(anEdit, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 8 }), (edits, cuts) => {
      let bytes = [...good];
      for (const { at, byte, kind } of edits) {
        const i = at % bytes.length;
        if (kind === 'replace') bytes[i] = byte;
        else if (kind === 'insert') bytes.splice(i, 0, byte);
        else bytes.splice(i, 1);
      }
      bytes = Uint8Array.from(bytes);
      if (same(bytes, { cuts: cuts.map((c) => c % bytes.length) }).error) failures++;
    }),
    { seed: SEED, numRuns: 500 },
  );
  assert.ok(failures > 100, `most damage is caught (${failures} of 500)`);
});

test('hostile or broken input: the same clear error from both, nothing thrown', { skip }, () => {
  const good = document(['a']);
  const cases = [
    [good.replace('[0,0,1,0,2', '[0,-1,1,0,2'), /unexpected '-' in the nodes section/],
    [good.replace('[0,0,1,0,2', '[0,0.5,1,0,2'), /unexpected '\.' in the nodes section/],
    [good.replace('[1,1,5', '[1,1,6'), /edges record 0 points at node offset 6, not a multiple of the node width 5/],
    [good.replace('[1,1,5\n,0,7,10]', '[1,1,5\n,0,7]'), /ends in the middle of a record/],
    [good.replace('9007199254740991', '9007199254740992'), /nodes record 2 holds a number past 2\^53 - 1/],
    [good.replace('9007199254740991', '9'.repeat(400)), /nodes record 2 holds a number past 2\^53 - 1/],
    [good.slice(0, good.length - 30), /ended early/],
    ['', /ended early/],
    ['[1,2,3]', /not a JSON object/],
    [`{"nodes":[1,2,3,4,5],${good.slice(1)}`, /comes before the snapshot header/],
    [good.replace('"edges"', '"nodes"'), /appears twice/],
    [good.replace('"a"', '"\\q"'), /bad escape '\\q'/],
    [good.replace('"a"', '"\\u12G4"'), /bad \\u escape/],
    [good.replace('"a"', '"a\u00e9').replace(/\]\}$/, ''), /ended early/],
    [`{"snapshot":{"meta":{}},"nodes":[]}`, /lacks its field lists or counts/],
    [`{"snapshot":{"meta":{"node_fields":${JSON.stringify(Array(65).fill('f'))},"edge_fields":["to_node"]},"node_count":0,"edge_count":0}}`, /lacks its field lists or counts/],
    [`{"snapshot":{"meta":[1,2}]}`, /not valid JSON/],
    [`{"snapshot":7}`, /"snapshot" is not an object/],
    [`{"snapshot":{"x":"${'y'.repeat(1024 * 1024)}"}}`, /header is longer than 1 MiB/],
    [`{${Array.from({ length: 300 }, (_, i) => `"k${i}":0`).join(',')}}`, /more than 256 top-level keys/],
    [`{"${'k'.repeat(100)}":1}`, /unexpected top-level key/],
    [`{"\u00ff\u00fe":]}`, /unbalanced "\u00c3\u00bf\u00c3\u00be"/],
    [`${good} trailing`, /data after the end/],
  ];
  for (const [text, message] of cases) {
    const bytes = utf8.encode(text);
    for (const size of [1, 5, bytes.length || 1]) {
      const r = same(bytes, { size });
      assert.match(r.error, message, `${text.slice(0, 80)} (chunks of ${size})`);
    }
  }
});

test('the transcoder stops when told or when a callback throws; bad arguments are refused', { skip }, () => {
  const bytes = utf8.encode(document(Array.from({ length: 5000 }, (_, i) => `s${i}`)));
  // Stopped after the first batch: no more payloads, and the document did not end.
  let batches = 0;
  const r = addon.transcodeJson(pieces(bytes, { size: 100 }), () => [5, 3, 2, 4, 0], () => ++batches < 1);
  assert.equal(batches, 1);
  assert.match(r.error, /ended early/);
  // A header callback that returns something else stops it too.
  assert.match(addon.transcodeJson([bytes], () => 'no such header', () => true).error, /^no such header$/);
  assert.match(addon.transcodeJson([bytes], () => [5, 3], () => true).error, /ended early/);
  assert.match(addon.transcodeJson([bytes], () => [5, 3, 9, 4, 0], () => true).error, /lacks its field lists/);
  // An exception in the output reaches the caller through the callbacks, as the JavaScript parser's does.
  const throwing = recordingOutput();
  throwing.output.strings = () => {
    throw new Error('the buffer is gone');
  };
  assert.equal(native([bytes], throwing).error, 'the heap snapshot stream failed: the buffer is gone');
  // Thrown by a raw callback, it is rethrown.
  const boom = new Error('boom');
  assert.throws(() => addon.transcodeJson([bytes], () => {
    throw boom;
  }, () => true), (e) => e === boom);
  assert.throws(() => addon.transcodeJson('text', () => [], () => true), /needs an array of Uint8Array chunks/);
  assert.throws(() => addon.transcodeJson(['text'], () => [], () => true), /needs an array of Uint8Array chunks/);
  assert.throws(() => addon.transcodeJson([bytes], () => []), /needs the header and payload functions/);
  assert.throws(() => addon.transcodeHeapSnapshot(), /needs the header and payload functions/);
  // A batch buffer detached by JavaScript cannot hurt it: the batches after it still come (over the
  // detached buffer, which Node 24 refuses to transfer again and Node 20 transfers empty).
  let calls = 0;
  let detached = 0;
  const detaching = addon.transcodeJson(pieces(bytes, { size: 1000 }), () => [5, 3, 2, 4, 0], (b) => {
    calls++;
    try {
      structuredClone(b.buffer, { transfer: [b.buffer] });
      detached++;
    } catch (e) {
      assert.equal(e.name, 'DataCloneError');
    }
    return true;
  });
  assert.ok(detached >= 1, 'detached once at least');
  assert.ok(calls > 2);
  assert.equal(detaching.error, '');
  assert.equal(detaching.strings, 5000);
  assert.equal(addon.heapSnapshotCount(), 0);
});
