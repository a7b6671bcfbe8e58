// Issue 11: the streaming parser the Runtime.HeapSnapshot provider runs on V8's snapshot chunks. Ground
// truth is JSON.parse of the same text: V8's own snapshot of this process, and hand-made documents
// with every string escape, surrogate pairs, strings longer than a bulk event, sections not carried
// and hostile input. Chunk boundaries are drawn at random with a fixed seed (HEAP_PARSER_SEED replays).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import fc from 'fast-check';
import { SnapshotJsonParser } from '../dist/providers/heap-snapshot/snapshot-json-parser.js';
import { decodingOutput, snapshotDocument } from './helpers/snapshot-output.mjs';

const SEED = Number(process.env.HEAP_PARSER_SEED ?? 11_2026_11_23);

/**
 * Feeds `text` cut at `cuts`: as text (the inspector's route), or as its UTF-8 bytes cut at the same
 * offsets (the addon's route, which may cut inside a character); returns what the parser emitted, decoded.
 */
function parse(text, cuts = [], as = 'text') {
  const { output, result } = decodingOutput();
  const parser = new SnapshotJsonParser(output);
  const input = as === 'text' ? text : new TextEncoder().encode(text);
  let at = 0;
  for (const c of [...cuts.filter((c) => c < input.length), input.length].sort((a, b) => a - b)) {
    if (as === 'text') parser.pushText(input.slice(at, c));
    else parser.push(input.subarray(at, c));
    at = c;
  }
  parser.finish();
  return { ...result(), error: parser.error, totals: parser.totals };
}

/** What the parser should produce: the JSON's own arrays, node offsets turned into node indexes. */
function expected(doc) {
  const m = doc.snapshot.meta;
  const w = m.node_fields.length;
  const scale = (arr, fields, ref) => {
    const k = fields.indexOf(ref);
    return arr.map((v, i) => (i % fields.length === k ? v / w : v));
  };
  return {
    nodes: doc.nodes,
    edges: scale(doc.edges, m.edge_fields, 'to_node'),
    locations: scale(doc.locations ?? [], m.location_fields ?? ['object_index'], 'object_index'),
    strings: doc.strings.map((s) => new TextDecoder().decode(new TextEncoder().encode(s))),
  };
}

/** Both routes into the parser, text and bytes, read exactly what JSON.parse reads. */
function check(text, cuts) {
  const want = expected(JSON.parse(text));
  const both = ['text', 'bytes'].map((as) => {
    const got = parse(text, cuts, as);
    assert.equal(got.error, undefined, as);
    assert.deepEqual(got.header, JSON.parse(text).snapshot, as);
    assert.deepEqual(got.nodes, want.nodes, as);
    assert.deepEqual(got.edges, want.edges, as);
    assert.deepEqual(got.locations, want.locations, as);
    assert.deepEqual(got.strings, want.strings, as);
    return got;
  });
  assert.deepEqual(both[0].totals, both[1].totals);
  return both[0];
}

const cutsOf = (text, max) => fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: max });

test("V8's own snapshot of this process, cut at random places, parses to exactly what JSON.parse reads", async () => {
  const chunks = [];
  for await (const c of v8.getHeapSnapshot()) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  const doc = JSON.parse(text);
  const got = check(text, []);
  assert.equal(got.totals.nodes, doc.snapshot.node_count, "V8's declared node count");
  assert.equal(got.totals.edges, doc.snapshot.edge_count, "V8's declared edge count");
  assert.equal(got.totals.strings, doc.strings.length);
  fc.assert(fc.property(cutsOf(text, 200), (cuts) => void check(text, cuts)), { seed: SEED, numRuns: 4 });
});

const document = snapshotDocument;

test('strings: every escape, surrogate pairs split anywhere, lone surrogates, a string longer than a bulk event', () => {
  const long = 'x'.repeat(40_000) + '\u00e9'.repeat(5000);
  const strings = ['', 'plain', 'quote " backslash \\ slash / ', '\b\f\n\r\t\u0001\u001f', 'caf\u00e9 \u4e2d\u6587 \ud83d\ude00', long];
  // JSON.stringify writes raw non-ASCII; V8 writes \u escapes: test both spellings.
  const escaped = document({ strings }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  for (const text of [document({ strings }), escaped]) {
    fc.assert(fc.property(cutsOf(text, 60), (cuts) => void check(text, cuts)), { seed: SEED, numRuns: 30 });
  }
  // A lone surrogate has no UTF-8: it becomes U+FFFD, as TextEncoder does.
  for (const as of ['text', 'bytes']) {
    const lone = parse(document({ strings: ['a', 'x'] }).replace('"x"', '"\\ud800 \\udc00 \\ud83d"'), [], as);
    assert.equal(lone.error, undefined);
    assert.deepEqual(lone.strings, ['a', '\ufffd \ufffd \ufffd']);
  }
  // Raw, a lone surrogate is U+FFFD on the text route (TextEncoder's), even when a chunk ends with it.
  const raw = document({ strings: ['a', 'x'] }).replace('"x"', '"\ud800z\ud83d"');
  const at = raw.indexOf('\ud800');
  assert.deepEqual(parse(raw, [at + 1, at + 3]).strings, ['a', '\ufffdz\ufffd']);
});

test('numbers past 2^32 and up to 2^53 survive; node offsets become node indexes', () => {
  const got = check(document({ strings: ['a', 'b', 'c'] }), []);
  assert.deepEqual(got.nodes.slice(5, 15), [1, 1, 3, 4294967296, 0, 1, 2, 5, 9007199254740991, 0]);
  assert.deepEqual(got.edges, [1, 1, 1, 0, 7, 2]);
});

test('sections not carried (allocation tracking) are skipped and their numbers counted; keys may come in any order', () => {
  const extra = '"trace_function_infos":[1,2,3,4,5,6],\n"trace_tree":[1,2,3,[4,5,6,[7,8,9,[]]]],\n"samples":[10,20],\n"future":{"a":[1,"x]"],"b":-1.5e3},\n"flag":true,\n';
  const text = document({ strings: ['a', 'b'], extra });
  const got = fc.assert(fc.property(cutsOf(text, 40), (cuts) => {
    const r = check(text, cuts);
    assert.equal(r.totals.skippedValues, 6 + 9 + 2 + 2);
  }), { seed: SEED, numRuns: 30 });
  assert.equal(got, undefined);
  const reordered = document({ strings: ['a'], order: 'reverse' });
  check(reordered, []);
});

test('hostile or broken input: one clear error, nothing thrown', () => {
  const good = document({ strings: ['a'] });
  const cases = [
    [good.replace('[0,0,1,0,2', '[0,-1,1,0,2'), /unexpected '-' in the nodes section/],
    [good.replace('[0,0,1,0,2', '[0,0.5,1,0,2'), /unexpected '\.' in the nodes section/],
    [good.replace('[1,1,5', '[1,1,6'), /not a multiple of the node width 5/],
    [good.replace('[1,1,5\n,0,7,10]', '[1,1,5\n,0,7]'), /ends in the middle of a record/],
    [good.slice(0, good.length - 30), /ended early/],
    ['[1,2,3]', /not a JSON object/],
    [`{"nodes":[1,2,3,4,5],${good.slice(1)}`, /comes before the snapshot header/],
    [good.replace('"edges"', '"nodes"'), /appears twice/],
    [good.replace('"a"', '"\\q"'), /bad escape/],
    [good.replace('"a"', '"\\u12G4"'), /bad \\u escape/],
    [`{"snapshot":{"meta":{}},"nodes":[]}`, /lacks its field lists or counts/],
    [`${good} trailing`, /data after the end/],
  ];
  for (const [text, message] of cases) {
    for (const as of ['text', 'bytes']) {
      const parser = new SnapshotJsonParser({ header() {}, nodes() {}, edges() {}, locations() {}, strings() {} });
      if (as === 'text') parser.pushText(text);
      else parser.push(new TextEncoder().encode(text));
      parser.finish();
      assert.match(parser.error ?? '(no error)', message, `${as}: ${text.slice(0, 80)}`);
    }
  }
});
