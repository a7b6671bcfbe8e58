// Reader properties over damaged input. Run through bounded-worker.mjs, so a hang fails the test
// instead of stalling it; each export takes { seed, numRuns } and throws fast-check's report on failure.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { readTrace, TraceFormatError } from '../../dist/index.js';
import { chunksOf, concat, eventKey, rawBlock, syntheticTrace } from './synthetic-trace.mjs';

const traceParams = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  batches: fc.integer({ min: 1, max: 10 }),
  perBatch: fc.integer({ min: 1, max: 10 }),
});

function assertFormatError(e, streamLength) {
  if (!(e instanceof TraceFormatError)) throw new Error(`reader threw something other than TraceFormatError: ${e?.stack ?? e}`);
  assert.ok(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= streamLength, `offset ${e.offset} of a ${streamLength}-byte stream`);
  assert.ok(e.message.length > 0 && !e.message.includes('\n'), 'one-line message');
}

async function iterate(source) {
  const events = [];
  try {
    for await (const e of readTrace(source)) events.push(e);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

async function summarize(source) {
  try {
    return { summary: await readTrace(source).summary() };
  } catch (error) {
    return { error };
  }
}

/** Iterates and summarizes `bytes` fed in `chunk`-byte pieces; either may fail only with a TraceFormatError. */
async function readBothWays(bytes, chunk) {
  const it = await iterate(chunksOf(bytes, chunk));
  if (it.error) assertFormatError(it.error, bytes.length);
  const sum = await summarize(chunksOf(bytes, chunk));
  if (sum.error) assertFormatError(sum.error, bytes.length);
  return { it, sum };
}

const comparable = (events) => events.map((e) => ({ key: eventKey(e), provider: e.provider, name: e.name, fields: e.fields }));

/** Per thread, in a run of events: attempts seen (last sequence + 1) minus events = drops before the last one seen. */
function gapsOf(events) {
  const byThread = new Map();
  for (const e of events) {
    const t = byThread.get(e.threadId) ?? { n: 0, last: -1 };
    t.n++;
    t.last = Math.max(t.last, e.sequence);
    byThread.set(e.threadId, t);
  }
  return byThread;
}

/** Truncated at any offset: exactly the events of the intact blocks, then 'truncated' where they end. */
export async function truncation({ seed, numRuns }) {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-fuzz-'));
  try {
    const cutSpec = fc.oneof(fc.record({ frac: fc.double({ min: 0, max: 1, noNaN: true }) }), fc.record({ block: fc.nat(), delta: fc.integer({ min: -1, max: 1 }) }));
    await fc.assert(
      fc.asyncProperty(traceParams, cutSpec, fc.integer({ min: 1, max: 400 }), fc.boolean(), async (params, spec, chunk, viaFile) => {
        const t = syntheticTrace(params);
        const len = t.bytes.length;
        const cut = 'frac' in spec ? Math.floor(spec.frac * len) : Math.min(len, Math.max(0, t.blocks[spec.block % t.blocks.length].end + spec.delta));
        const bytes = t.bytes.slice(0, cut);
        let source = () => chunksOf(bytes, chunk);
        if (viaFile) {
          const file = join(dir, 'cut.tptrace');
          writeFileSync(file, bytes);
          source = () => file;
        }
        const intact = t.blocks.filter((b) => b.end <= cut);
        const expected = t.events.slice(0, intact.reduce((n, b) => n + b.events, 0));
        const intactEnd = intact.length > 0 ? intact[intact.length - 1].end : t.headerEnd;

        const it = await iterate(source());
        assert.deepEqual(comparable(it.events), comparable(expected), 'exactly the events of the intact blocks, in order');
        const sum = await summarize(source());
        if (cut === len) {
          assert.equal(it.error, undefined);
          assert.equal(sum.summary.complete, true);
          assert.equal(sum.summary.events, t.events.length);
          for (const [id, s] of t.threads) {
            const got = sum.summary.threads[id] ?? { events: 0, dropped: 0 }; // a thread that never attempted is not listed
            assert.equal(got.events + got.dropped, s.nextSeq, `thread ${id}: events + dropped == attempts`);
          }
          return;
        }
        assertFormatError(it.error, cut);
        if (cut === 0) {
          assert.equal(it.error.code, 'not-a-trace', 'an empty file is not a trace');
          assert.equal(sum.error.code, 'not-a-trace');
          return;
        }
        if (cut < t.headerEnd) {
          assert.deepEqual([it.error.code, it.error.offset], ['truncated', 0], 'a stream that ends inside the header is a truncated trace');
          assert.deepEqual([sum.summary.events, sum.summary.error.code], [0, 'truncated']);
          return;
        }
        assert.equal(it.error.code, 'truncated');
        assert.equal(it.error.offset, intactEnd, 'the error names the end of the last intact block');
        assert.equal(sum.error, undefined, 'summary reports damage instead of throwing');
        const s = sum.summary;
        assert.equal(s.complete, false);
        assert.equal(s.events, expected.length);
        assert.deepEqual({ code: s.error.code, offset: s.error.offset }, { code: 'truncated', offset: intactEnd });
        let dropped = 0;
        for (const [id, g] of gapsOf(expected)) {
          assert.equal(s.threads[id].events, g.n);
          assert.equal(s.threads[id].events + s.threads[id].dropped, g.last + 1, `thread ${id}: events + dropped == attempts seen`);
          dropped += g.last + 1 - g.n;
        }
        assert.equal(s.dropped, dropped);
      }),
      { seed, numRuns, includeErrorInReport: true },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return numRuns;
}

/** Flipped bits: only TraceFormatError, and nothing made up (every event read is one that was written). */
export async function bitFlips({ seed, numRuns }) {
  const flips = fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), { minLength: 1, maxLength: 4 });
  await fc.assert(
    fc.asyncProperty(traceParams, flips, fc.integer({ min: 1, max: 400 }), async (params, fl, chunk) => {
      const t = syntheticTrace(params);
      const bytes = t.bytes.slice();
      const positions = fl.map((f) => f.at % bytes.length);
      fl.forEach((f, i) => (bytes[positions[i]] ^= 1 << f.bit));
      const { it, sum } = await readBothWays(bytes, chunk);
      if (!sum.error && !sum.summary.complete) assert.ok(Number.isInteger(sum.summary.error.offset));
      // The checksum covers each block's header too: damage anywhere is caught before anything is made up.
      const written = new Map(t.events.map((e) => [eventKey(e), e]));
      for (const e of it.events) {
        const w = written.get(eventKey(e));
        assert.ok(w, `event ${eventKey(e)} was never written`);
        assert.deepEqual(e.fields, w.fields);
      }
      if (sum.summary) assert.ok(sum.summary.events <= t.events.length);
    }),
    { seed, numRuns, includeErrorInReport: true },
  );
  return numRuns;
}

/** Random bytes, alone or behind a valid magic or header: only TraceFormatError, never a hang. */
export async function randomBytes({ seed, numRuns }) {
  const good = syntheticTrace({ seed: 1 });
  const prefix = fc.constantFrom(new Uint8Array(0), good.bytes.slice(0, 8), good.bytes.slice(0, 12), good.bytes.slice(0, good.headerEnd));
  await fc.assert(
    fc.asyncProperty(prefix, fc.uint8Array({ maxLength: 3000 }), fc.integer({ min: 1, max: 500 }), async (p, rest, chunk) => {
      const bytes = concat(p, rest);
      const { it, sum } = await readBothWays(bytes, chunk);
    }),
    { seed, numRuns, includeErrorInReport: true },
  );
  return numRuns;
}

/**
 * Blocks with valid checksums but damaged or random payloads, so the decoders behind the checksum
 * (metadata, events, payloads, sequence points, end of stream) see garbage too.
 */
export async function checksummedGarbage({ seed, numRuns }) {
  const block = fc.oneof(
    fc.record({ random: fc.constant(true), kind: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 255 })), payload: fc.uint8Array({ maxLength: 200 }) }),
    fc.record({ random: fc.constant(false), index: fc.nat(), edits: fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 3 }) }),
  );
  await fc.assert(
    fc.asyncProperty(traceParams, fc.array(block, { maxLength: 8 }), fc.boolean(), fc.integer({ min: 1, max: 500 }), async (params, blocks, withEnd, chunk) => {
      const t = syntheticTrace(params);
      const metadataEnd = t.blocks.filter((b) => b.kind === 'metadata').at(-1).end;
      const parts = [t.bytes.slice(0, metadataEnd)];
      for (const b of blocks) {
        if (b.random) {
          parts.push(rawBlock(b.kind, b.payload));
          continue;
        }
        const real = t.blocks[b.index % t.blocks.length];
        const payload = t.bytes.slice(real.start + 12, real.end);
        if (payload.length > 0) for (const e of b.edits) payload[e.at % payload.length] = e.value;
        parts.push(rawBlock(t.bytes[real.start], payload));
      }
      if (withEnd) parts.push(t.bytes.slice(t.blocks.at(-1).start));
      const bytes = concat(...parts);
      const { it, sum } = await readBothWays(bytes, chunk);
    }),
    { seed, numRuns, includeErrorInReport: true },
  );
  return numRuns;
}
