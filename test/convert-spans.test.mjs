// Spans and counters in the timeline exports, checked against `tracepipe dump` of a real trace
// (fixtures/span-trace.mjs): Perfetto decoded by protoc and its slices rebuilt the way a trace
// processor does (per track, begins and ends in time order matched like a call stack); Chrome JSON
// parsed and checked for structure (per thread, every X inside the one it starts in, or after it).
// Every span is one slice with its own start, duration, fields and error; an unfinished one runs to
// the trace's end, marked; a child is drawn inside its parent or joined to it by a flow arrow.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { headerSize } from '../dist/format/stream-header.js';
import { blocksOf, cli, dumpJsonl, needTool, run } from './helpers/convert-helpers.mjs';
import { parseProtoText } from './helpers/reader-text.mjs';

const SPAN_TRACE = fileURLToPath(new URL('./fixtures/span-trace.mjs', import.meta.url));
const SCHEMA_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
const LANE_TID_STRIDE = 2 ** 20;

let dir;
let file;
let dump;
let pid;

/** The spans of a dump: begin and end paired by id; ends with no begin apart. */
function spansOf(events) {
  const spans = new Map();
  const orphanEnds = [];
  for (const e of events) {
    if (e.name.endsWith('.Begin')) {
      spans.set(e.fields.spanId, { id: e.fields.spanId, name: e.name.slice(0, -6), provider: e.provider, threadId: e.threadId, start: e.timestampNs, parent: e.fields.parentSpanId, fields: { ...e.fields } });
    } else if (e.name.endsWith('.End')) {
      const s = spans.get(e.fields.spanId);
      if (!s || s.end !== undefined) orphanEnds.push(e);
      else {
        s.end = e.timestampNs;
        const { spanId: _, ...endFields } = e.fields;
        Object.assign(s.fields, endFields);
      }
    }
  }
  const lastNs = Math.max(...events.map((e) => e.timestampNs));
  for (const s of spans.values()) {
    s.duration = (s.end ?? lastNs) - s.start;
    if (s.end === undefined) s.fields.unfinished = true;
  }
  return { spans, orphanEnds, lastNs };
}

/** The dump's counter values by `group(event)` (a counter on a thread), in time order. */
function counterSeries(group) {
  const series = {};
  for (const e of dump.events.filter((x) => x.name.endsWith('.Counter'))) (series[group(e)] ??= []).push(Object.values(e.fields)[0]);
  return series;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-convert-spans-'));
  file = join(dir, 'spans.tptrace');
  const r = await run(process.execPath, [SPAN_TRACE, file], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  dump = await dumpJsonl(file);
  assert.equal(dump.code, 0, dump.stderr);
  pid = dump.events.find((e) => e.name === 'Process').fields.pid;
});
after(() => rm(dir, { recursive: true, force: true }));

test('the fixture has what the checks are about', () => {
  const { spans, orphanEnds } = spansOf(dump.events);
  const all = [...spans.values()];
  assert.ok(all.length >= 60);
  assert.ok(all.some((s) => s.fields.error === true && s.fields.errorName === 'RangeError'), 'an error end');
  assert.equal(all.filter((s) => s.end === undefined).length, 3, 'three unfinished spans');
  assert.ok(all.some((s) => s.threadId !== 0), 'spans on a worker');
  assert.ok(all.some((s) => s.fields.bytes === String(2n ** 60n + 7n)), 'a u64 end field past 2^53');
  assert.equal(orphanEnds.length, 1, 'an end with no begin');
});

test('perfetto: every span is one slice (start, duration, fields, error), children nest in their parent or get a flow arrow, counters are counter tracks', async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const out = join(dir, 'spans.pftrace');
  const c = await cli(['convert', file, '--to', 'perfetto', '-o', out]);
  assert.equal(c.code, 0, c.stderr);
  const decoded = await run('sh', ['-c', `protoc --decode=perfetto.protos.Trace --proto_path='${SCHEMA_DIR}' '${join(SCHEMA_DIR, 'perfetto-trace.proto')}' < '${out}'`]);
  assert.equal(decoded.code, 0, decoded.stderr);
  assert.doesNotMatch(decoded.stdout, /^\s*\d+:/m, 'no field the schema does not know');
  const packets = parseProtoText(decoded.stdout).packet;

  const boot = BigInt(packets[0].clock_snapshot.clocks.find((k) => String(k.clock_id) === '6').timestamp);
  const ns = (p) => Number(BigInt(p.timestamp) - boot);
  const names = new Map();
  const categories = new Map();
  const annotationNames = new Map();
  const tracks = new Map();
  for (const p of packets) {
    for (const n of p.interned_data?.event_names ?? []) names.set(n.iid, n.name);
    for (const n of p.interned_data?.event_categories ?? []) categories.set(n.iid, n.name);
    for (const n of p.interned_data?.debug_annotation_names ?? []) annotationNames.set(n.iid, n.name);
    const d = p.track_descriptor;
    if (d) tracks.set(String(d.uuid), { parent: d.parent_uuid === undefined ? undefined : String(d.parent_uuid), tid: d.thread?.tid, name: d.name, counter: d.counter !== undefined });
  }
  const threadOfTrack = (uuid) => {
    const tr = tracks.get(uuid);
    return tr.tid !== undefined ? tr.tid - pid : threadOfTrack(tr.parent);
  };
  const args = (te) => Object.fromEntries((te.debug_annotations ?? []).map((a) => [annotationNames.get(a.name_iid), a.bool_value ?? a.uint_value ?? a.int_value ?? a.double_value ?? a.string_value]));

  // What a trace processor does: per track, events in time order (ties as written), begins and ends as a stack.
  const events = packets.map((p, i) => ({ p, i })).filter(({ p }) => p.track_event).sort((a, b) => ns(a.p) - ns(b.p) || a.i - b.i);
  const stacks = new Map();
  const slices = [];
  const markers = [];
  const counters = {};
  for (const { p } of events) {
    const te = p.track_event;
    const track = String(te.track_uuid);
    const stack = stacks.get(track) ?? [];
    stacks.set(track, stack);
    const flows = { out: (te.flow_ids ?? []).map(String), in: (te.terminating_flow_ids ?? []).map(String) };
    if (te.type === 'TYPE_SLICE_BEGIN') {
      stack.push({ track, name: names.get(te.name_iid), category: categories.get(te.category_iids?.[0]), ts: ns(p), args: args(te), flows, parent: stack[stack.length - 1] });
    } else if (te.type === 'TYPE_SLICE_END') {
      const s = stack.pop();
      assert.ok(s, `an end on track ${track} with nothing open`);
      s.dur = ns(p) - s.ts;
      slices.push(s);
    } else if (te.type === 'TYPE_COUNTER') {
      (counters[track] ??= []).push(te.double_counter_value ?? te.counter_value);
    } else if (flows.out.length + flows.in.length > 0) {
      assert.equal(names.get(te.name_iid), 'span flow');
      markers.push({ flows, in: stack[stack.length - 1] });
    }
  }
  for (const [track, stack] of stacks) assert.equal(stack.length, 0, `track ${track}: every slice ends`);

  const { spans, orphanEnds } = spansOf(dump.events);
  const sliceOf = new Map();
  for (const s of slices.filter((x) => x.args.spanId !== undefined)) {
    assert.ok(!sliceOf.has(String(s.args.spanId)), `span ${s.args.spanId} drawn once`);
    sliceOf.set(String(s.args.spanId), s);
  }
  assert.equal(sliceOf.size, spans.size, 'one slice per span');
  for (const [id, want] of spans) {
    const s = sliceOf.get(id);
    assert.ok(s, `span ${id} (${want.name}) has a slice`);
    assert.equal(s.name, want.name);
    assert.equal(s.category, want.provider);
    assert.equal(s.ts, want.start, `span ${id}: start`);
    assert.equal(s.dur, want.duration, `span ${id}: duration (a stack mismatch would swap them)`);
    assert.deepEqual(Object.fromEntries(Object.entries(s.args).map(([k, v]) => [k, String(v)])), Object.fromEntries(Object.entries(want.fields).map(([k, v]) => [k, String(v)])), `span ${id}: arguments`);
    assert.equal(threadOfTrack(s.track), want.threadId, `span ${id}: on its thread`);
    const tr = tracks.get(s.track);
    assert.ok(tr.tid !== undefined || /^spans \d+$/.test(tr.name), `span ${id}: on its thread's track or a spans lane under it (${tr.name})`);
  }

  // A child is inside its parent on one track, or an arrow joins them: from the parent's slice (its
  // begin or a marker inside it) to the child's.
  const inSlice = (s, target) => {
    for (let x = s; x; x = x.parent) if (x === target) return true;
    return false;
  };
  const ends = (id, dir) => [...slices.filter((s) => s.flows[dir].includes(id)), ...markers.filter((m) => m.flows[dir].includes(id)).map((m) => m.in)];
  const arrowed = [];
  for (const [id, want] of spans) {
    const parent = sliceOf.get(want.parent);
    if (!parent) continue;
    const child = sliceOf.get(id);
    const from = ends(id, 'out');
    const to = ends(id, 'in');
    if (child.track === parent.track && inSlice(child, parent)) {
      assert.equal(from.length + to.length, 0, `span ${id} is inside its parent: no arrow`);
      continue;
    }
    arrowed.push(id);
    assert.equal(from.length, 1, `span ${id}: one arrow source`);
    assert.equal(to.length, 1, `span ${id}: one arrow end`);
    assert.ok(inSlice(from[0], parent), `span ${id}: the arrow leaves its parent`);
    assert.ok(inSlice(to[0], child), `span ${id}: the arrow reaches it`);
  }
  // Exactly the children the fixture draws outside their parent: a sibling that overlaps another
  // without nesting, a child that outlives its parent, one that begins after it, one never ended.
  assert.deepEqual(arrowed.map((id) => `${spans.get(id).name} ${spans.get(id).fields.sql ?? spans.get(id).fields.n}`).sort(), ['Job 1', 'Job 2', 'Leak 2', 'Query parallel 1']);
  // The requests' queries run one after another inside them: all drawn inside.
  for (const want of [...spans.values()].filter((s) => /^select \d+\.\d$/.test(s.fields.sql))) {
    assert.ok(inSlice(sliceOf.get(want.id), sliceOf.get(want.parent)), `query ${want.fields.sql} inside its request`);
  }
  // Overlapping requests on one thread sit on lanes beside it.
  assert.ok([...tracks.values()].some((tr) => tr.name === 'spans 2'));

  // The end with no begin is an instant of its own, with its fields.
  const orphans = events.filter(({ p }) => p.track_event.type === 'TYPE_INSTANT' && names.get(p.track_event.name_iid) === 'Convert.Spans/Query.End');
  assert.deepEqual(orphans.map(({ p }) => String(args(p.track_event).spanId)), orphanEnds.map((e) => e.fields.spanId));

  // Counters: a counter track per counter and thread ("Provider/Counter unit"), with every value in order.
  const got = {};
  for (const [track, values] of Object.entries(counters)) got[`${tracks.get(track).name} T${threadOfTrack(track)}`] = values;
  assert.deepEqual(got, counterSeries((e) => `${e.provider}/${e.name.slice(0, -8)} ${Object.keys(e.fields)[0]} T${e.threadId}`));
});

/** Per thread, X events sorted by start (longer first on ties) must each lie inside the one open or after it. */
function checkNesting(xs) {
  const byTid = new Map();
  for (const e of xs) byTid.set(e.tid, [...(byTid.get(e.tid) ?? []), e]);
  for (const [tid, list] of byTid) {
    list.sort((a, b) => a.start - b.start || b.end - a.end);
    const stack = [];
    for (const e of list) {
      while (stack.length && stack[stack.length - 1].end <= e.start) stack.pop();
      const top = stack[stack.length - 1];
      assert.ok(!top || e.end <= top.end, `tid ${tid}: ${e.name} [${e.start}, ${e.end}] overlaps ${top?.name} [${top?.start}, ${top?.end}] without nesting`);
      stack.push(e);
    }
  }
}

test('chrome: every span is one X (start, duration, args), every thread\'s X events nest properly, arrows pair up, counters are C events', async () => {
  const out = join(dir, 'spans.json');
  const c = await cli(['convert', file, '--to', 'chrome', '-o', out]);
  assert.equal(c.code, 0, c.stderr);
  const trace = JSON.parse(await readFile(out, 'utf8'));
  const x = trace.traceEvents.filter((e) => e.ph === 'X').map((e) => ({ ...e, start: Math.round(e.ts * 1000), end: Math.round(e.ts * 1000) + Math.round(e.dur * 1000) }));
  checkNesting(x);
  const { spans } = spansOf(dump.events);
  const byId = new Map(x.filter((e) => e.args.spanId !== undefined).map((e) => [String(e.args.spanId), e]));
  assert.equal(byId.size, spans.size);
  const threadOf = (tid) => (tid - pid) % LANE_TID_STRIDE;
  for (const [id, want] of spans) {
    const e = byId.get(id);
    assert.ok(e, `span ${id} has an X`);
    assert.equal(e.name, want.name);
    assert.equal(e.cat, want.provider);
    assert.equal(e.start, want.start);
    assert.equal(e.end - e.start, want.duration);
    assert.equal(threadOf(e.tid), want.threadId);
    // 64-bit values are exact number literals: compare their text.
    const text = (v) => (typeof v === 'number' && !Number.isSafeInteger(v) ? BigInt(v).toString() : String(v));
    for (const [k, v] of Object.entries(want.fields)) if (k !== 'bytes') assert.equal(text(e.args[k]), String(v), `span ${id}: ${k}`);
  }
  const raw = await readFile(out, 'utf8');
  assert.ok(raw.includes(`"bytes":${2n ** 60n + 7n}`), 'a u64 past 2^53 written exactly');
  // Lanes are named threads beside their thread.
  const named = new Map(trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [e.tid, e.args.name]));
  for (const e of x) assert.ok(named.has(e.tid), `tid ${e.tid} is named`);
  assert.ok([...named.values()].includes('main spans 2'));
  // Arrows: an s at the parent's start on its lane, an f (bound to the enclosing slice) at the child's.
  const flows = new Map();
  for (const e of trace.traceEvents.filter((f) => f.ph === 's' || f.ph === 'f')) flows.set(e.id, { ...flows.get(e.id), [e.ph]: e });
  assert.equal(flows.size, 4, 'the four children drawn outside their parent');
  for (const [id, { s, f }] of flows) {
    assert.ok(s && f, `flow ${id} has both ends`);
    assert.equal(f.bp, 'e');
    const child = byId.get(id);
    const parent = byId.get(String(spans.get(id).parent));
    assert.deepEqual([Math.round(s.ts * 1000), s.tid], [parent.start, parent.tid], `flow ${id} leaves its parent`);
    assert.deepEqual([Math.round(f.ts * 1000), f.tid], [child.start, child.tid], `flow ${id} reaches its child`);
  }
  // Counters: "Provider/Counter" (a worker's with its thread), the unit as the argument.
  const got = {};
  for (const e of trace.traceEvents.filter((ev) => ev.ph === 'C')) (got[e.name] ??= []).push(Object.values(e.args)[0]);
  assert.deepEqual(got, counterSeries((e) => `${e.provider}/${e.name.slice(0, -8)}${e.threadId === 0 ? '' : ` [thread ${e.threadId}]`}`));
});

test('chrome: a trace cut short converts its intact part; spans whose end was cut off run to its last event, marked unfinished', async () => {
  // Cut inside an events block (from the last one back) such that some span's end is lost with it.
  const cut = join(dir, 'cut.tptrace');
  const bytes = await readFile(file);
  const ended = new Set([...spansOf(dump.events).spans.values()].filter((s) => s.end !== undefined).map((s) => s.id));
  let intact;
  for (const block of blocksOf(bytes, headerSize(bytes)).filter((b) => b.kind === 2).reverse()) {
    await writeFile(cut, bytes.subarray(0, block.start + 30));
    intact = await dumpJsonl(cut);
    if ([...spansOf(intact.events).spans.values()].some((s) => s.end === undefined && ended.has(s.id))) break;
  }
  assert.equal(intact.code, 1);
  const out = join(dir, 'cut.json');
  const c = await cli(['convert', cut, '--to', 'chrome', '-o', out]);
  assert.equal(c.code, 1, 'exits with the reader\'s error');
  assert.ok((await stat(out)).size > 0);
  const trace = JSON.parse(await readFile(out, 'utf8'));
  const x = trace.traceEvents.filter((e) => e.ph === 'X').map((e) => ({ ...e, start: Math.round(e.ts * 1000), end: Math.round(e.ts * 1000) + Math.round(e.dur * 1000) }));
  checkNesting(x);
  const { spans, lastNs } = spansOf(intact.events);
  assert.ok([...spans.values()].some((s) => s.end === undefined && ended.has(s.id)), 'the cut took some span\'s end');
  for (const [id, want] of spans) {
    const e = x.find((s) => String(s.args.spanId) === id);
    assert.ok(e, `span ${id} drawn`);
    assert.equal(e.args.unfinished === true, want.end === undefined, `span ${id}: marked unfinished iff its end is missing`);
    if (want.end === undefined) assert.equal(e.end, lastNs, `span ${id}: runs to the last event`);
  }
});
