// The OTLP export's output is pinned: two fixed traces (an app with nested, concurrent, failing and
// unfinished spans, events in and out of spans, a counter and GC pauses; a Node.Channels server with
// the runtime counters, served requests with and without a W3C caller context) export to exactly the
// requests the export gave before its drain-thread cost was cut (commit 7c2380f), decoded with the
// OpenTelemetry project's own definitions: same spans, ids, attributes, events, metrics and logs.
// Both routes: `convert --to otlp`, and the live sink posting to a receiver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBounded } from './helpers/bounded-worker.mjs';
import { cli } from './helpers/convert-helpers.mjs';
import { decodeOtlpFile } from './helpers/otlp-decode.mjs';
import { startReceiver } from './helpers/otlp-receiver.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const FIXTURES = fileURLToPath(new URL('./fixtures/otlp-golden/', import.meta.url));
const REPLAY = new URL('./helpers/otlp-sink-replay.mjs', import.meta.url);
const REPLAY_TIMEOUT_MS = 30_000;
const TRACES = ['app', 'service'];

const golden = async (name) => JSON.parse(await readFile(join(FIXTURES, `${name}.otlp.json`), 'utf8'));
const bySignal = (requests, signal) => requests.filter((r) => r.signal === signal).map((r) => r.request);

for (const name of TRACES) {
  test(`convert --to otlp of the fixed ${name} trace decodes to the pinned requests`, async (t) => {
    const out = join(await tempDir(t), `${name}.otlp`);
    const c = await cli(['convert', join(FIXTURES, `${name}.tptrace`), '--to', 'otlp', '-q', '-o', out]);
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(decodeOtlpFile(await readFile(out)), await golden(name));
  });

  test(`the live export of the fixed ${name} trace posts the pinned requests`, async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const stats = await runBounded(REPLAY, 'replayThroughSink', { file: join(FIXTURES, `${name}.tptrace`), endpoint: receiver.url }, REPLAY_TIMEOUT_MS);
    const expected = await golden(name);
    assert.equal(stats.requestsDropped, 0);
    assert.equal(stats.spansSent, bySignal(expected, 'traces').flatMap((r) => r.resourceSpans.flatMap((s) => s.scopeSpans.flatMap((ss) => ss.spans))).length);
    for (const signal of ['traces', 'metrics', 'logs']) assert.deepEqual(receiver.received[signal], bySignal(expected, signal), signal);
    // gzip'd at zlib's fastest level: the gzip header's XFL byte (RFC 1952) is 4 for it, 0 for the default level.
    assert.deepEqual(new Set(receiver.attempts.map((a) => a.body[8])), new Set([4]));
  });
}
