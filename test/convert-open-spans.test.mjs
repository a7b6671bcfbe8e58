// A span-heavy trace through `tracepipe convert --to perfetto|chrome`: 70,000 spans that never end
// (more than the 65,536 held open, so the oldest are set aside) among requests whose children often
// outlive them or never end. Before, lanes were placed against every open span: this trace took
// minutes and gigabytes, and died of heap exhaustion. Now it converts in bounded memory, and the
// output is checked as a trace processor reads it (Perfetto decoded by protoc; per track, begins and
// ends in time order matched like a call stack) and as Chrome's nesting requires.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTrace } from '../dist/index.js';
import { writeSpanTrace } from '../bench/support/synthetic-traces.mjs';
import { convertMeasured, needTool, run } from './helpers/convert-helpers.mjs';
import { parseProtoText } from './helpers/reader-text.mjs';

const SCHEMA_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
/** Peak RSS allowed to a conversion (it was 4 GB, where the worker's heap limit killed it). */
const LIMIT_MB = 400;

let dir;
let file;
/** Span id → { start, end? } as the reader reads the trace. */
const spans = new Map();

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-open-spans-'));
  file = join(dir, 'open-spans.tptrace');
  writeSpanTrace(file, { open: 70_000, requests: 3_000 });
  for await (const e of readTrace(file)) {
    const id = String(e.fields.spanId);
    if (e.name.endsWith('.Begin')) spans.set(id, { start: e.timestampNs });
    else spans.get(id).end = e.timestampNs;
  }
});
after(() => rm(dir, { recursive: true, force: true }));

/** Each span is one slice, starting at its begin, as long as its span or marked unfinished. */
function assertEverySpan(slices) {
  const byId = new Map();
  for (const s of slices) {
    assert.ok(!byId.has(s.id), `span ${s.id} drawn once`);
    byId.set(s.id, s);
  }
  assert.equal(byId.size, spans.size, 'one slice per span');
  let unfinished = 0;
  for (const [id, want] of spans) {
    const s = byId.get(id);
    assert.equal(s.start, want.start, `span ${id}: start`);
    assert.equal(s.unfinished, want.end === undefined, `span ${id}: unfinished iff it never ended`);
    if (want.end !== undefined) assert.equal(s.duration, want.end - want.start, `span ${id}: duration`);
    else unfinished++;
  }
  assert.ok(unfinished > 70_000, `${unfinished} unfinished`);
}

test('perfetto: every span is one slice and every track reads back as a call stack, in bounded memory (protoc)', { timeout: 600_000 }, async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const out = join(dir, 'open-spans.pftrace');
  const c = await convertMeasured([file, '--to', 'perfetto', '-o', out], { timeoutMs: 300_000 });
  assert.equal(c.code, 0, c.stderr);
  t.diagnostic(`peak RSS ${c.maxRssMB.toFixed(0)} MB`);
  assert.ok(c.maxRssMB < LIMIT_MB, `peak RSS ${c.maxRssMB.toFixed(0)} MB`);
  const decoded = await run('sh', ['-c', `protoc --decode=perfetto.protos.Trace --proto_path='${SCHEMA_DIR}' '${join(SCHEMA_DIR, 'perfetto-trace.proto')}' < '${out}'`]);
  assert.equal(decoded.code, 0, decoded.stderr);
  const packets = parseProtoText(decoded.stdout).packet;
  const boot = BigInt(packets[0].clock_snapshot.clocks.find((k) => String(k.clock_id) === '6').timestamp);
  const annotationNames = new Map();
  for (const p of packets) for (const n of p.interned_data?.debug_annotation_names ?? []) annotationNames.set(n.iid, n.name);
  const stacks = new Map();
  const slices = [];
  const events = packets.map((p, i) => ({ p, i, ns: p.timestamp === undefined ? 0 : Number(BigInt(p.timestamp) - boot) })).filter(({ p }) => p.track_event);
  events.sort((a, b) => a.ns - b.ns || a.i - b.i);
  for (const { p, ns } of events) {
    const te = p.track_event;
    const stack = stacks.get(te.track_uuid) ?? [];
    stacks.set(te.track_uuid, stack);
    if (te.type === 'TYPE_SLICE_BEGIN') {
      const args = Object.fromEntries((te.debug_annotations ?? []).map((a) => [annotationNames.get(a.name_iid), a.bool_value ?? a.uint_value]));
      stack.push({ id: String(args.spanId), start: ns, unfinished: args.unfinished === true });
    } else if (te.type === 'TYPE_SLICE_END') {
      const s = stack.pop();
      assert.ok(s, `an end on track ${te.track_uuid} with nothing open`);
      s.duration = ns - s.start;
      slices.push(s);
    }
  }
  for (const [track, stack] of stacks) assert.equal(stack.length, 0, `track ${track}: every slice ends`);
  // A slice matched to the wrong end (lanes overlapping) would have the other one's duration.
  assertEverySpan(slices);
});

test('chrome: every span is one X, and on every thread and lane the X events nest, in bounded memory', { timeout: 600_000 }, async (t) => {
  const out = join(dir, 'open-spans.json');
  const c = await convertMeasured([file, '--to', 'chrome', '-o', out], { timeoutMs: 300_000 });
  assert.equal(c.code, 0, c.stderr);
  t.diagnostic(`peak RSS ${c.maxRssMB.toFixed(0)} MB`);
  assert.ok(c.maxRssMB < LIMIT_MB, `peak RSS ${c.maxRssMB.toFixed(0)} MB`);
  const xs = JSON.parse(await readFile(out, 'utf8')).traceEvents.filter((e) => e.ph === 'X');
  const slices = xs.map((e) => ({ id: String(e.args.spanId), tid: e.tid, start: Math.round(e.ts * 1000), duration: Math.round(e.dur * 1000), unfinished: e.args.unfinished === true }));
  assertEverySpan(slices);
  // Per thread (a lane is a thread of its own), sorted by start, longer first: each inside the one open or after it.
  const byTid = new Map();
  for (const s of slices) {
    if (!byTid.has(s.tid)) byTid.set(s.tid, []);
    byTid.get(s.tid).push(s);
  }
  for (const [tid, list] of byTid) {
    list.sort((a, b) => a.start - b.start || b.duration - a.duration);
    const open = [];
    for (const s of list) {
      while (open.length > 0 && open[open.length - 1].start + open[open.length - 1].duration <= s.start) open.pop();
      const top = open[open.length - 1];
      assert.ok(!top || s.start + s.duration <= top.start + top.duration, `tid ${tid}: span ${s.id} overlaps span ${top?.id} without nesting`);
      open.push(s);
    }
  }
});
