// The two transcoders of Runtime.HeapSnapshot on the same bytes, outside any pause: V8's snapshot JSON
// of this process holding N objects of test/fixtures/heap-target.mjs's class Retained, kept in memory
// as V8's own chunks, then transcoded by the addon's C++ (transcodeJson) and by the JavaScript parser
// of the inspector route (push), payloads dropped; the two alternate, 5 runs each. Prints nanoseconds
// per byte of JSON (medians) and their ratio. Not part of `npm run bench`: it explains the pause figures.
//   node bench/gcdump/transcode-speed.mjs [objects, default 500,000]
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SnapshotJsonParser } from '../../dist/providers/heap-snapshot/snapshot-json-parser.js';
import { transcoderCallbacks } from '../../dist/providers/heap-snapshot/snapshot-stream.js';
import { Retained } from '../../test/fixtures/heap-target.mjs';
import { median } from '../support/stats.mjs';

const OBJECTS = Number(process.argv[2] ?? 500_000);
const RUNS = 5;
const addon = createRequire(import.meta.url)(fileURLToPath(new URL('../../native/gc-hook/build/Release/heap_snapshot.node', import.meta.url)));

globalThis.held = Array.from({ length: OBJECTS }, (_, i) => new Retained(i));

const chunks = [];
addon.takeHeapSnapshot((c) => void chunks.push(Uint8Array.from(c)));
const bytes = chunks.reduce((n, c) => n + c.length, 0);
let payloadBytes = 0;
const drop = (first, count, payload) => {
  payloadBytes += payload.length;
};
const output = { header() {}, nodes: drop, edges: drop, locations: drop, strings: drop };

function native() {
  const { onHeader, onPayloads } = transcoderCallbacks(output, () => true);
  const r = addon.transcodeJson(chunks, onHeader, onPayloads);
  if (r.error) throw new Error(r.error);
}
function javascript() {
  const parser = new SnapshotJsonParser(output);
  for (const c of chunks) parser.push(c);
  parser.finish();
  if (parser.error) throw new Error(parser.error);
}

const times = { native: [], javascript: [] };
for (let run = 0; run < RUNS; run++) {
  for (const [name, f] of run % 2 ? [['javascript', javascript], ['native', native]] : [['native', native], ['javascript', javascript]]) {
    payloadBytes = 0;
    const t0 = performance.now();
    f();
    times[name].push(((performance.now() - t0) * 1e6) / bytes);
  }
}
const [c, js] = [median(times.native), median(times.javascript)];
console.log(`${OBJECTS.toLocaleString('en-US')} objects: ${(bytes / 2 ** 20).toFixed(1)} MiB of JSON in ${chunks.length} chunks, ${(payloadBytes / 2 ** 20).toFixed(1)} MiB of payloads`);
console.log(`  C++ transcoder (addon route)        ${c.toFixed(2)} ns/byte (runs: ${times.native.map((t) => t.toFixed(2)).join(', ')})`);
console.log(`  JavaScript parser (inspector route) ${js.toFixed(2)} ns/byte (runs: ${times.javascript.map((t) => t.toFixed(2)).join(', ')})`);
console.log(`  C++ / JavaScript                    ${(c / js).toFixed(2)}×`);
