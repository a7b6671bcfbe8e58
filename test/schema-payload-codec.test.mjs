// Every field type survives the generated writer and the reader's payload decoder, bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FIELD_TYPES } from '../dist/index.js';
import { generateWriter } from '../dist/schema/event-writer.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';
import { payloadDecoder } from '../dist/format/payload-codec.js';
import { fakeRecordTarget, recordAt0 } from './helpers/fake-record-target.mjs';

const TWO64 = 2n ** 64n;
const TWO63 = 2n ** 63n;

// Any UTF-16 code unit (lone surrogates included, and favoured) or any astral code point.
const utf16Unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
);

/** Per type: values a caller may pass, and what a reader must hand back for each. */
const VALUES = {
  bool: { arb: fc.boolean(), expect: (v) => v },
  u8: { arb: fc.integer({ min: 0, max: 0xff }), expect: (v) => v },
  i8: { arb: fc.integer({ min: -0x80, max: 0x7f }), expect: (v) => v },
  u16: { arb: fc.integer({ min: 0, max: 0xffff }), expect: (v) => v },
  i16: { arb: fc.integer({ min: -0x8000, max: 0x7fff }), expect: (v) => v },
  u32: { arb: fc.integer({ min: 0, max: 0xffffffff }), expect: (v) => v },
  i32: { arb: fc.integer({ min: -0x80000000, max: 0x7fffffff }), expect: (v) => v },
  u64: {
    arb: fc.oneof(
      fc.bigInt({ min: 0n, max: TWO64 - 1n }),
      fc.maxSafeNat(),
      // Large integral Numbers (exact doubles up to 2^64) take the number path too.
      fc.bigInt({ min: 0n, max: TWO64 - 1n }).map(Number).filter((n) => n < 2 ** 64),
    ),
    expect: (v) => BigInt(v),
  },
  i64: {
    arb: fc.oneof(
      fc.bigInt({ min: -TWO63, max: TWO63 - 1n }),
      fc.maxSafeInteger(),
      fc.bigInt({ min: -TWO63, max: TWO63 - 1n }).map(Number).filter((n) => n < 2 ** 63),
    ),
    expect: (v) => BigInt(v),
  },
  f32: { arb: fc.double(), expect: (v) => Math.fround(v) },
  f64: { arb: fc.double(), expect: (v) => v },
  string: { arb: fc.string({ unit: utf16Unit, maxLength: 40 }), expect: (v) => new TextDecoder().decode(new TextEncoder().encode(v)) },
  bytes: { arb: fc.uint8Array({ maxLength: 64 }), expect: (v) => v },
};

test('every field type has a value generator here', () => {
  assert.deepEqual(Object.keys(VALUES).sort(), [...FIELD_TYPES].sort());
});

/** A random event shape: `minLength`–`maxLength` fields of any types, with a value for each. */
const shapeOf = (constraints) =>
  fc.array(fc.constantFrom(...FIELD_TYPES), constraints).chain((types) => fc.tuple(fc.constant(types), fc.tuple(...types.map((t) => VALUES[t].arb))));
const eventShape = shapeOf({ maxLength: 10 });
/** Wider than the types that get a generated decoder (up to 64 fields): the reader decodes these in a loop. */
const wideShape = shapeOf({ minLength: 65, maxLength: 200 });

function writeAndDecode(types, values, ts, typeIndex) {
  const fields = types.map((t, i) => [`f${i}`, t]);
  const layout = computePayloadLayout(fields);
  const target = fakeRecordTarget();
  const writeAt = generateWriter(layout, typeIndex, { now: () => 0 }, true, () => assert.fail('a valid call was refused'));
  writeAt.call({ _targets: [target] }, ts, ...values);
  const rec = recordAt0(target);
  return { layout, target, rec, decoded: decodePayload(layout, target.u8, rec.payloadStart, rec.payloadLength, 0) };
}

/** The reader's decoder for `layout`, over a view of the whole buffer (as the reader has one per events block). */
function decodePayload(layout, bytes, start, length, base) {
  return payloadDecoder(layout)(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), bytes, start, length, base);
}

for (const [what, shape, numRuns] of [['', eventShape, 500], [' (wide types, the loop decoder)', wideShape, 60]]) test(`write → payload decoder round-trips every field type in any combination${what}`, () => {
  fc.assert(
    fc.property(shape, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 1, max: 0xffff }), ([types, values], ts, typeIndex) => {
      const { target, rec, decoded } = writeAndDecode(types, values, ts, typeIndex);
      assert.equal(rec.typeIndex, typeIndex);
      assert.ok(Object.is(rec.timestampMs, ts));
      assert.equal(target.seq, 1, 'one attempt, one sequence number');
      assert.equal(target.reserves, 1);
      assert.equal(target.pos % 8, 0, 'the next record starts 8-byte aligned');
      assert.equal(target.u32[target.commitIndex], target.pos, 'the commit word publishes the end of the record');
      assert.deepEqual(Object.keys(decoded), types.map((_, i) => `f${i}`), 'fields come back in declaration order');
      types.forEach((t, i) => {
        const want = VALUES[t].expect(values[i]);
        const got = decoded[`f${i}`];
        if (t === 'f32' || t === 'f64') assert.ok(Object.is(got, want), `${t}: wrote ${values[i]}, read ${got}`);
        else assert.deepEqual(got, want, `${t} field f${i}`);
      });
    }),
    { numRuns },
  );
});

// Up to 200 units: a writer writes strings from LONG_STRING units on with Node's encoder, shorter ones itself.
test('strings are encoded byte-for-byte as TextEncoder would, short and long', () => {
  fc.assert(
    fc.property(fc.string({ unit: utf16Unit, maxLength: 200 }), (s) => {
      const { rec, target } = writeAndDecode(['string'], [s], 0, 1);
      const want = new TextEncoder().encode(s);
      assert.equal(rec.payloadLength, 4 + want.length);
      assert.equal(target.u32[4], want.length, 'the length slot holds the UTF-8 byte count');
      assert.deepEqual(target.u8.slice(rec.payloadStart + 4, rec.payloadStart + 4 + want.length), want);
    }),
    { numRuns: 500 },
  );
});

test('lone surrogates become U+FFFD', () => {
  const { decoded } = writeAndDecode(['string', 'string', 'string'], ['a\ud800b', '\udc00', 'x\ud83d'], 0, 1);
  assert.deepEqual(decoded, { f0: 'a\ufffdb', f1: '\ufffd', f2: 'x\ufffd' });
  const long = `${'a'.repeat(40)}\ud800b\udc00${'é'.repeat(40)}\ud83d`;
  const wrote = writeAndDecode(['string'], [long], 0, 1).decoded.f0;
  assert.equal(wrote, `${'a'.repeat(40)}\ufffdb\ufffd${'é'.repeat(40)}\ufffd`, 'a string long enough for Node\'s encoder too');
});

test('a field named __proto__ is an own field, never the prototype (generated and loop decoders)', () => {
  for (const extra of [0, 70]) {
    const padding = Array.from({ length: extra }, (_, i) => [`p${i}`, 'u8']);
    const layout = computePayloadLayout([['__proto__', 'u32'], ['constructor', 'string'], ...padding]);
    const target = fakeRecordTarget();
    generateWriter(layout, 1, { now: () => 0 }, false).call({ _targets: [target] }, 7, 'x', ...padding.map(() => 1));
    const rec = recordAt0(target);
    const decoded = decodePayload(layout, target.u8, rec.payloadStart, rec.payloadLength, 0);
    assert.equal(Object.getPrototypeOf(decoded), Object.prototype);
    assert.deepEqual(Object.entries(decoded).slice(0, 2), [['__proto__', 7], ['constructor', 'x']]);
    assert.equal(Object.keys(decoded).length, 2 + extra);
  }
});

test('payload size is the fixed part plus the variable bytes, with no padding between fields', () => {
  fc.assert(
    fc.property(eventShape, ([types, values]) => {
      const { layout, rec } = writeAndDecode(types, values, 0, 1);
      const sizes = { bool: 1, u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, string: 4, bytes: 4, u64: 8, i64: 8, f64: 8 };
      assert.equal(layout.fixedSize, types.reduce((n, t) => n + sizes[t], 0));
      for (const f of layout.fields) assert.equal(f.offset % sizes[f.type], 0, `${f.type} at ${f.offset} is naturally aligned`);
      const variable = types.reduce((n, t, i) => n + (t === 'string' ? new TextEncoder().encode(values[i]).length : t === 'bytes' ? values[i].length : 0), 0);
      assert.equal(rec.payloadLength, layout.fixedSize + variable);
    }),
    { numRuns: 200 },
  );
});

test('the payload decoder rejects payloads that do not match their layout with a corrupt error (generated and loop decoders)', () => {
  for (const extra of [0, 70]) {
    const types = ['u32', 'string', ...Array(extra).fill('u8')];
    const { layout, target, rec } = writeAndDecode(types, [7, 'hello', ...Array(extra).fill(1)], 0, 1);
    const check = (len) =>
      assert.throws(() => decodePayload(layout, target.u8, rec.payloadStart, len, 100), (e) => e.name === 'TraceFormatError' && e.code === 'corrupt' && e.offset === 100);
    check(layout.fixedSize - 1); // shorter than the fixed part
    check(rec.payloadLength - 1); // string runs past the payload
    check(rec.payloadLength + 1); // trailing bytes
  }
});

test('string fields decode as TextDecoder does, event after event, whether their bytes repeat or not', () => {
  // The decoder remembers each field's last short value: repeats, a change of one byte, non-ASCII
  // text, invalid UTF-8, a BOM, the empty string and a value past the remembered length must all
  // come out as a fresh decode would, in a generated decoder (1 field) and the loop one (65 fields).
  const texts = [[0x47, 0x45, 0x54], [0x47, 0x45, 0x54], [0x50, 0x55, 0x54], [], [0xc3, 0xa9], [0xff, 0x41], [0xef, 0xbb, 0xbf, 0x41], [0xef, 0xbb, 0xbf, 0x41],
    [0x47, 0x45, 0x54], Array.from({ length: 40 }, (_, i) => 0x61 + (i % 26)), Array.from({ length: 40 }, (_, i) => 0x61 + (i % 26)), [0x47, 0x45, 0x54]];
  const utf8 = new TextDecoder('utf-8');
  for (const width of [1, 65]) {
    const layout = computePayloadLayout(Array.from({ length: width }, (_, i) => [`s${i}`, 'string']));
    const decode = payloadDecoder(layout);
    for (const t of texts) {
      // Every field holds `t`: the fixed part is one u32 length a field, then the bytes of each.
      const payload = new Uint8Array(layout.fixedSize + width * t.length);
      const view = new DataView(payload.buffer);
      for (const f of layout.variable) {
        view.setUint32(f.offset, t.length, true);
        payload.set(t, layout.fixedSize + f.index * t.length);
      }
      const fields = decode(view, payload, 0, payload.length, 0);
      for (let i = 0; i < width; i++) assert.equal(fields[`s${i}`], utf8.decode(new Uint8Array(t)), `width ${width}, bytes ${t}`);
    }
  }
});

test("a long string is written right when the application has replaced the global Buffer and patched Node's", async () => {
  const { RecordViews } = await import('../dist/schema/record-abi.js');
  const original = globalThis.Buffer;
  const { from } = original;
  const utf8Write = original.prototype.utf8Write;
  const target = fakeRecordTarget();
  try {
    // A polyfill in place of the global, a Buffer.from that copies, a utf8Write that changes the text.
    globalThis.Buffer = class PolyfillBuffer {};
    original.from = (...args) => from.call(original, new Uint8Array(args[0]).slice().buffer);
    original.prototype.utf8Write = function (s, ...rest) {
      return utf8Write.call(this, String(s).toUpperCase(), ...rest);
    };
    // Made as a session's thread buffer makes its views.
    target.buf = new RecordViews(target.u8.buffer).buf;
    const layout = computePayloadLayout([['text', 'string']]);
    const long = `a long string, at least thirty-two units: é😀\ud800`;
    generateWriter(layout, 1, { now: () => 0 }, true, () => assert.fail('refused')).call({ _targets: [target] }, 0, long);
    const rec = recordAt0(target);
    const decoded = decodePayload(layout, target.u8, rec.payloadStart, rec.payloadLength, 0);
    assert.equal(decoded.text, 'a long string, at least thirty-two units: é😀\ufffd');
  } finally {
    globalThis.Buffer = original;
    original.from = from;
    original.prototype.utf8Write = utf8Write;
  }
});
