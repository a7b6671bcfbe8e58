// The JSON fields writer against JSON.stringify, for export-encoders.test.mjs; run there in its own
// process too, under --disallow-code-generation-from-strings, where the writer is its closure form.
import fc from 'fast-check';
import { fieldsWriter, JsonWriter } from '../../dist/export/json-text.js';

const KINDS = {
  bool: fc.boolean(),
  u8: fc.integer({ min: 0, max: 255 }),
  i32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  u32: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  f64: fc.oneof(fc.double(), fc.constantFrom(-0.0000012345678901234567, -1.7976931348623157e308, NaN, -Infinity)),
  u64: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  i64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  string: fc.string({ unit: 'binary', maxLength: 40 }),
  bytes: fc.uint8Array({ maxLength: 40 }),
};

/** What the writer must give for one value: JSON.stringify's text, 64-bit integers as `bigints` says, bytes as hex. */
function expected(type, v, bigints) {
  if (type === 'u64' || type === 'i64') return bigints === 'string' ? `"${v}"` : String(v);
  if (type === 'bytes') return `"${Buffer.from(v).toString('hex')}"`;
  return JSON.stringify(v);
}

/**
 * Types of up to 8 fields of any kinds, under keys that need escaping too, written after some text
 * into a writer whose buffer starts at 1 byte (so room runs out mid-event), then `close`: exactly the
 * members JSON.stringify gives, then `close`. Returns the number of records checked.
 */
export function checkFieldsWriter(seed, numRuns) {
  const field = fc.record({ key: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), type: fc.constantFrom(...Object.keys(KINDS)) });
  const type = fc.uniqueArray(field, { maxLength: 8, selector: (f) => f.key }).chain((fields) =>
    fc.record({ fields: fc.constant(fields), values: fc.tuple(...fields.map((f) => KINDS[f.type])), bigints: fc.constantFrom('string', 'number'), close: fc.constantFrom('', '}}', '}}\n') }),
  );
  let checked = 0;
  fc.assert(
    fc.property(type, fc.integer({ min: 0, max: 300 }), ({ fields, values, bigints, close }, lead) => {
      const record = {};
      // As the decoder makes them: own properties whatever the name (`__proto__` included).
      fields.forEach((f, i) => Object.defineProperty(record, f.key, { value: values[i], enumerable: true, writable: true, configurable: true }));
      // The decoded object's own key order (integer-like keys first) is the order written.
      const keys = Object.keys(record);
      const types = new Map(fields.map((f) => [f.key, f.type]));
      const w = new JsonWriter(1);
      w.ascii('x'.repeat(lead));
      fieldsWriter(keys, types, bigints, close)(w, record);
      const want = 'x'.repeat(lead) + keys.map((k) => `${JSON.stringify(k)}:${expected(types.get(k), record[k], bigints)}`).join(',') + close;
      const got = Buffer.from(w.buf.subarray(0, w.pos)).toString();
      if (got !== want) throw new Error(`wrote ${JSON.stringify(got)}\nexpected ${JSON.stringify(want)}`);
      checked++;
    }),
    { numRuns, seed },
  );
  return checked;
}
