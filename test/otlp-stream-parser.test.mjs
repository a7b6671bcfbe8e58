// The live export reads its stream without an event object per event (src/otlp/otlp-stream-parser.ts):
// each event's fields decoded from its payload bytes and handed with one rewritten event. Nothing of
// that event may be kept past its call: the requests must equal those of a parser that decodes every
// event into an object of its own, for the golden traces, whole or pushed in small pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TraceParser } from '../dist/format/trace-parser.js';
import { OtlpSignals } from '../dist/otlp/otlp-signals.js';
import { otlpStreamParser } from '../dist/otlp/otlp-stream-parser.js';

const TRACES = ['app', 'service'].map((name) => new URL(`./fixtures/otlp-golden/${name}.tptrace`, import.meta.url));

/** Every request `parserFor` makes of `bytes`, pushed `chunk` bytes at a time. */
function requests(bytes, chunk, parserFor) {
  const batches = [];
  let signals;
  const parser = parserFor((h) => (signals = new OtlpSignals(h, (b) => batches.push(b))), () => signals);
  for (let at = 0; at < bytes.length; at += chunk) parser.push(bytes.subarray(at, at + chunk));
  parser.finish();
  signals.finish();
  return batches;
}

const decodingEvery = (signalsFor, signals) => new TraceParser({ header: signalsFor, event: (e) => signals().event(e) });
const streamParser = (signalsFor) => otlpStreamParser(signalsFor);

for (const url of TRACES) {
  test(`the export's stream parser makes the requests a decoding parser makes: ${url.pathname.split('/').pop()}`, () => {
    const bytes = readFileSync(url);
    const expected = requests(bytes, bytes.length, decodingEvery);
    assert.ok(expected.some((b) => b.signal === 'traces' && b.items.length > 0), 'the trace has spans');
    for (const chunk of [bytes.length, 4096, 97]) assert.deepEqual(requests(bytes, chunk, streamParser), expected, `pushed ${chunk} bytes at a time`);
  });
}
