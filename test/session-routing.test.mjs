// Sixteen concurrent sessions, each with its own providers and output: an event reaches exactly the
// sessions that enabled it by provider, keywords and level.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { defineProvider, Level, liveSessions, readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const N = 16;
// Twice the default per-process limit (8): this test is about routing across many sessions, so it
// raises the limit for its own process, the way a user would.
process.env.TRACEPIPE_MAX_SESSIONS = String(N);
const providers = Array.from({ length: N }, (_, i) =>
  defineProvider(`Route.P${i}`, {
    keywords: { a: 0x1n, b: 0x2n },
    events: {
      A: { id: 1, level: Level.Informational, keywords: ['a'], fields: [['n', 'u32']] },
      B: { id: 2, level: Level.Informational, keywords: ['b'], fields: [['n', 'u32']] },
      V: { id: 3, level: Level.Verbose, fields: [['n', 'u32']] },
      L: { id: 4, level: Level.LogAlways, keywords: ['b'], fields: [['n', 'u32']] },
    },
  }),
);

async function* once(bytes) {
  yield bytes;
}

test('16 concurrent sessions each receive exactly the events they enabled', async (t) => {
  const dir = await tempDir(t);
  const sessions = [];
  for (let i = 0; i < N; i++) {
    const next = (i + 1) % N;
    // Session i wants all of P(i), and from P(i+1) either keyword a up to Informational (→ A only)
    // or keyword b at Critical (→ only the LogAlways event L).
    const spec = `Route.P${i},Route.P${next}:${i % 2 === 0 ? '0x1:4' : '0x2:1'}`;
    const expected = [`Route.P${i}/A`, `Route.P${i}/B`, `Route.P${i}/V`, `Route.P${i}/L`, i % 2 === 0 ? `Route.P${next}/A` : `Route.P${next}/L`].sort();
    const entry = { i, expected, received: [], chunks: [] };
    let output;
    if (i % 4 === 0) output = { onEvent: (e) => entry.received.push(e) };
    else if (i % 4 === 1) {
      const stream = new PassThrough();
      stream.on('data', (c) => entry.chunks.push(c));
      output = { stream };
    } else output = entry.file = join(dir, `s${i}.tptrace`);
    entry.session = await startSession({ providers: spec, output, bufferSizeMB: 1 });
    sessions.push(entry);
  }
  assert.equal(liveSessions().length, N);
  for (const p of providers) for (const ev of p.events) assert.equal(ev.enabled, true, `${p.name}/${ev.name} is wanted by some session`);

  providers.forEach((p, i) => p.events.forEach((ev, k) => ev.write(i * 10 + k)));
  const results = await Promise.all(sessions.map((s) => s.session.stop()));

  for (const [k, s] of sessions.entries()) {
    const events = s.i % 4 === 0 ? s.received : [];
    if (s.i % 4 !== 0) for await (const e of readTrace(s.file ?? once(Buffer.concat(s.chunks)))) events.push(e);
    const got = events.map((e) => `${e.provider}/${e.name}`).sort();
    assert.deepEqual(got, s.expected, `session ${s.i}`);
    for (const e of events) assert.equal(e.fields.n, Number(e.provider.slice('Route.P'.length)) * 10 + (e.id - 1), 'payload matches the event');
    assert.equal(results[k].eventsWritten, s.expected.length);
    assert.equal(results[k].eventsDropped, 0);
    assert.equal(results[k].status, 'stopped');
  }
  assert.equal(liveSessions().length, 0);
  for (const p of providers) for (const ev of p.events) assert.equal(ev.enabled, false);
});
