// Varints, zigzag and the bounded little-endian reader/writer that every block is built from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteWriter } from '../dist/format/byte-writer.js';
import { ByteReader } from '../dist/format/byte-reader.js';
import { MAX_VARINT_BYTES, varintSize, zigzag, unzigzag } from '../dist/format/varint.js';
import { TraceFormatError } from '../dist/index.js';

const varintValue = fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, 127, 128, 16383, 16384, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53));

test('varints round-trip every integer in 0..2^53 in varintSize(n) ≤ 8 bytes', () => {
  fc.assert(
    fc.property(fc.array(varintValue, { minLength: 1, maxLength: 20 }), (ns) => {
      const w = new ByteWriter(4); // tiny, so ensure() has to grow it
      const sizes = [];
      for (const n of ns) {
        const before = w.pos;
        w.varint(n);
        sizes.push(w.pos - before);
      }
      const bytes = w.take();
      const r = new ByteReader(bytes);
      ns.forEach((n, i) => {
        assert.equal(sizes[i], varintSize(n));
        assert.ok(sizes[i] <= MAX_VARINT_BYTES);
        assert.equal(r.varint(), n);
      });
      assert.ok(r.done);
    }),
    { numRuns: 300 },
  );
});

test('zigzag maps signed integers to naturals and back (|n| ≤ 2^52)', () => {
  const signed = fc.oneof(fc.integer(), fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), fc.constantFrom(0, -1, 1, -(2 ** 52), 2 ** 52));
  fc.assert(
    fc.property(signed, (n) => {
      const z = zigzag(n);
      assert.ok(Number.isInteger(z) && z >= 0 && z <= 2 ** 53);
      assert.equal(z, n >= 0 ? 2 * n : -2 * n - 1);
      assert.ok(Object.is(unzigzag(z), n === 0 ? 0 : n)); // no -0
      const w = new ByteWriter(16);
      w.varint(z);
      assert.equal(unzigzag(new ByteReader(w.take()).varint()), n);
    }),
    { numRuns: 500 },
  );
});

test('fixed-width values and strings round-trip through ByteWriter/ByteReader', () => {
  const item = fc.oneof(
    fc.record({ k: fc.constant('u8'), v: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ k: fc.constant('u16'), v: fc.integer({ min: 0, max: 0xffff }) }),
    fc.record({ k: fc.constant('u32'), v: fc.integer({ min: 0, max: 0xffffffff }) }),
    fc.record({ k: fc.constant('f64'), v: fc.double() }),
    fc.record({ k: fc.constant('u64'), v: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }),
    fc.record({ k: fc.constant('string'), v: fc.string({ unit: 'binary', maxLength: 50 }) }),
    fc.record({ k: fc.constant('bytes'), v: fc.uint8Array({ maxLength: 50 }) }),
  );
  fc.assert(
    fc.property(fc.array(item, { maxLength: 30 }), (items) => {
      const w = new ByteWriter(1);
      for (const { k, v } of items) {
        if (k === 'bytes') {
          w.varint(v.length);
          w.bytes(v);
        } else w[k](v);
      }
      const r = new ByteReader(w.take());
      for (const { k, v } of items) {
        const got = k === 'bytes' ? r.bytes(r.varint()) : r[k]();
        if (k === 'f64') assert.ok(Object.is(got, v));
        else assert.deepEqual(got, v);
      }
      assert.ok(r.done);
    }),
    { numRuns: 300 },
  );
});

test('ByteReader reports overruns, over-long varints and bad UTF-8 as corrupt at a stream offset', () => {
  const corruptAt = (offset) => (e) => e instanceof TraceFormatError && e.code === 'corrupt' && e.offset === offset;
  // Reads past `end`, with the block at stream offset 1000.
  assert.throws(() => new ByteReader(new Uint8Array(3), 0, 3, 1000).u32(), corruptAt(1000));
  const r = new ByteReader(new Uint8Array([1, 2, 3]), 0, 2, 1000);
  r.u8();
  assert.throws(() => r.u16(), corruptAt(1001));
  // A varint that never ends inside its block, and one longer than 8 bytes.
  assert.throws(() => new ByteReader(new Uint8Array([0x80, 0x80]), 0, 2, 50).varint(), corruptAt(52));
  assert.throws(() => new ByteReader(new Uint8Array(9).fill(0x80)).varint(), corruptAt(8));
  // A string whose bytes are not UTF-8.
  assert.throws(() => new ByteReader(new Uint8Array([2, 0xc3, 0x28])).string(), corruptAt(3));
});

test('the reader never throws anything but TraceFormatError on random bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 40 }), fc.array(fc.constantFrom('u8', 'u16', 'u32', 'f64', 'u64', 'varint', 'string'), { maxLength: 12 }), (bytes, ops) => {
      const r = new ByteReader(bytes, 0, bytes.length, 7);
      try {
        for (const op of ops) r[op]();
      } catch (e) {
        assert.ok(e instanceof TraceFormatError, String(e));
        assert.ok(Number.isInteger(e.offset) && e.offset >= 7 && e.offset <= 7 + bytes.length);
      }
    }),
    { numRuns: 500 },
  );
});
