// `tracepipe dump` writes its lines straight into bytes (DumpText). The text must stay what it was when
// each line was built as a string (with control characters escaped, issue 21): the string formatting
// dump used before is kept here as the oracle, and compared byte for byte, on arbitrary events (fast-check) and on whole traces, hostile ones too,
// through the real command. TRACEPIPE_FUZZ_SEED picks the traces and the generated events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { readTrace } from '../dist/index.js';
import { DumpText } from '../dist/cli/dump-text.js';
import { formatOffset } from '../dist/cli/format-time.js';
import { printable, printableText } from '../dist/cli/printable.js';
import { HOSTILE_TRACES, writeHostileTrace } from './helpers/hostile-traces.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261123) | 0;

// The oracle: dump's formatting as it was, one string per line.
function toJsonValue(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJsonValue(x)]));
  return v;
}
const stringify = (v) => JSON.stringify(toJsonValue(v));
function textValue(v) {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return printable(typeof v === 'string' ? JSON.stringify(v) : stringify(v));
}
function oracleText(e) {
  let fields = '';
  for (const k of Object.keys(e.fields)) fields += `${fields ? ' ' : ''}${printable(k)}=${textValue(e.fields[k])}`;
  return `${(e.timestampNs / 1e9).toFixed(6).padStart(12)}  T${String(e.threadId).padEnd(4)} #${String(e.sequence).padEnd(8)} ${printable(e.provider)}/${printable(e.name)}  ${fields}\n`;
}
const oracleJson = (e) => `${printable(stringify(e))}\n`;

function written(format, events) {
  const w = new DumpText(16);
  for (const e of events) (format === 'jsonl' ? w.jsonLine(e) : w.textLine(e));
  return Buffer.from(w.buf.subarray(0, w.pos));
}

/** Timestamps where rounding to microseconds is delicate: ties, the edge of the digit-by-digit range, negatives, non-integers. */
const timestamp = fc.oneof(
  fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  fc.nat({ max: 2 ** 22 }).map((k) => k * 1000 + 500),
  fc.integer({ min: -3, max: 3 }).map((d) => 2 ** 52 + d),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -0, 499, 500, 501, 999_999_500, 1e21, 2 ** 60, -500, Infinity, NaN),
);
const value = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
  fc.double(),
  fc.constantFrom(-0, NaN, Infinity, -Infinity, 2 ** 31, -(2 ** 31) - 1),
  fc.boolean(),
  fc.string({ unit: 'binary' }),
  fc.string(),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
  fc.uint8Array({ maxLength: 8 }),
);
const name = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('__proto__', '0', '17', 'a"b', 'é', 'x\\y', 'ü\u2028'));
/** A decoded event as the reader makes it: fields an own data property each, `__proto__` included. */
const event = fc
  .record({
    provider: fc.string({ unit: 'binary', maxLength: 20 }),
    name: fc.string({ maxLength: 20 }),
    id: fc.nat({ max: 0xffff }),
    version: fc.nat({ max: 255 }),
    level: fc.nat({ max: 5 }),
    timestampNs: timestamp,
    threadId: fc.oneof(fc.nat({ max: 5000 }), fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.constant(2 ** 56)),
    sequence: fc.oneof(fc.nat({ max: 1e6 }), fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.constant(2 ** 60)),
    fields: fc.array(fc.tuple(name, value), { maxLength: 6 }),
  })
  .map((e) => {
    const fields = {};
    for (const [k, v] of e.fields) Object.defineProperty(fields, k, { value: v, enumerable: true, writable: true, configurable: true });
    return { ...e, fields };
  });

test('DumpText writes, byte for byte, the lines dump built as strings (text and jsonl, any event)', () => {
  fc.assert(
    fc.property(fc.array(event, { minLength: 1, maxLength: 20 }), (events) => {
      assert.deepEqual(written('text', events), Buffer.from(events.map(oracleText).join('')));
      assert.deepEqual(written('jsonl', events), Buffer.from(events.map(oracleJson).join('')));
    }),
    { seed: SEED, numRuns: 400 },
  );
});

test('the time column is formatOffset digit by digit: ties and the edge of the exact range', () => {
  const w = new DumpText(16);
  const cases = [0, 1, 499, 500, 501, 1500, 2500, 999_999_499, 999_999_500, 999_999_501, 1e9, 123_456_789_012_500, 2 ** 52 - 1, 2 ** 52, 2 ** 52 + 2, -1, -500, 1e22];
  for (let k = 0; k < 20_000; k++) cases.push(k * 1000 + 500, k * 7919 + 1, 2 ** 52 - 1 - k * 1013);
  for (const ns of cases) {
    w.pos = 0;
    w.textLine({ provider: 'P', name: 'E', id: 1, version: 0, level: 4, timestampNs: ns, threadId: 1, sequence: 0, fields: {} });
    const line = Buffer.from(w.buf.subarray(0, w.pos)).toString();
    assert.equal(line.slice(0, line.indexOf('  T')), formatOffset(ns), `timestamp ${ns}`);
  }
});

/** Runs `tracepipe dump` on `file`; resolves with its exit code, the digest and length of its stdout, and its stderr. */
function dump(file, format) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'dump', file, '--format', format], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = createHash('sha256');
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (b) => {
      out.update(b);
      bytes += b.length;
    });
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ?? code, digest: out.digest('hex'), bytes, stderr });
    });
  });
}

/** The oracle's output for a whole trace (its digest and length): every event readTrace yields, then the error, if any, as dump reports it. */
async function expected(file, format) {
  const out = createHash('sha256');
  let bytes = 0;
  let error;
  try {
    for await (const e of readTrace(file)) {
      const line = Buffer.from(format === 'jsonl' ? oracleJson(e) : oracleText(e));
      out.update(line);
      bytes += line.length;
    }
  } catch (e) {
    error = e.message;
  }
  return { digest: out.digest('hex'), bytes, error };
}

// hugeBlocks is left out: its smallest trace is one 16 MiB block of 5.6 M events, minutes for the
// oracle; its lines (one type without fields) are among those the generated events cover.
for (const kind of Object.keys(HOSTILE_TRACES).filter((k) => k !== 'hugeBlocks')) {
  test(`dump prints the same bytes as before: ${kind}`, async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, `${kind}.tptrace`);
    writeHostileTrace(kind, file, 2 << 20, SEED);
    for (const format of ['text', 'jsonl']) {
      const [got, want] = await Promise.all([dump(file, format), expected(file, format)]);
      assert.equal(got.code, want.error ? 1 : 0, `${kind} ${format}: ${got.stderr}`);
      assert.equal(got.stderr, want.error ? `tracepipe: ${printableText(want.error)}\n` : '', `${kind} ${format}`);
      assert.deepEqual({ digest: got.digest, bytes: got.bytes }, { digest: want.digest, bytes: want.bytes }, `${kind} ${format}: the bytes printed`);
    }
  });
}
