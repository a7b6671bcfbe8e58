// SpanSlices (src/export/span-slices.ts) against what a timeline tool does with its output: on each
// track, slice begins and ends sorted by time (ties in the order written) and matched like a call
// stack, as Perfetto's trace processor matches TYPE_SLICE_BEGIN/END. Whatever the order spans begin
// and end in, every span is drawn once, each lane's slices come back with their own start and
// duration, and a child drawn outside its parent gets exactly one arrow from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SpanSlices } from '../dist/export/span-slices.js';
import { computePayloadLayout } from '../dist/schema/payload-layout.js';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261123);
const beginType = { layout: computePayloadLayout([['spanId', 'u64'], ['parentSpanId', 'u64']]) };
const endType = { layout: computePayloadLayout([['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string']]) };

const begin = (id, parent, threadId, ts) => ({ provider: 'P', name: 'S.Begin', threadId, timestampNs: ts, type: beginType, fields: { spanId: BigInt(id), parentSpanId: BigInt(parent) } });
const end = (id, threadId, ts) => ({ provider: 'P', name: 'S.End', threadId, timestampNs: ts, type: endType, fields: { spanId: BigInt(id), error: false, errorName: '' } });

/**
 * Random span activity on up to 3 threads: each step advances the clock (often by 0, for ties), then
 * begins a span (a child of a random open span of the thread, of a span elsewhere, or a root) or
 * ends a random open span. Spans left open are closed by finish().
 */
const steps = fc.array(
  fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })), thread: fc.integer({ min: 0, max: 2 }), op: fc.integer({ min: 0, max: 99 }), pick: fc.nat() }),
  { maxLength: 300 },
);

function run(plan) {
  const drawn = [];
  const slices = new SpanSlices((slice, flows) => drawn.push({ slice, flows }));
  const open = [[], [], []];
  const all = new Map();
  let ts = 0;
  let next = 1;
  for (const { dt, thread, op, pick } of plan) {
    ts += dt;
    const mine = open[thread];
    if (op < 55 || mine.length === 0) {
      const pool = op % 5 === 0 ? [...open.flat()] : mine;
      const parent = op % 7 === 0 || pool.length === 0 ? 0 : pool[pick % pool.length];
      const id = next++;
      all.set(id, { parent, thread, start: ts });
      mine.push(id);
      slices.begin(begin(id, parent, thread, ts));
    } else {
      const [id] = mine.splice(pick % mine.length, 1);
      all.get(id).end = ts;
      assert.equal(slices.end(end(id, thread, ts)), true);
    }
  }
  slices.finish(ts);
  return { drawn, all, lastNs: ts };
}

test('every span is drawn once, and each lane reads back as its slices when matched like a call stack', () => {
  fc.assert(
    fc.property(steps, (plan) => {
      const { drawn, all, lastNs } = run(plan);
      const byId = new Map(drawn.map((d) => [Number(d.slice.args.find(([k]) => k === 'spanId')[2]), d]));
      assert.equal(drawn.length, all.size, 'each span drawn once');
      for (const [id, s] of all) {
        const d = byId.get(id);
        assert.ok(d, `span ${id} drawn`);
        assert.equal(d.slice.threadId, s.thread);
        assert.equal(d.slice.startNs, s.start);
        assert.equal(d.slice.durationNs, (s.end ?? lastNs) - s.start);
        assert.equal(d.slice.args.some(([k]) => k === 'unfinished'), s.end === undefined);
      }
      // Begin and end of each slice as written, per lane; sorted by time, ties in written order.
      const tracks = new Map();
      drawn.forEach(({ slice }, order) => {
        const key = `${slice.threadId}/${slice.lane}`;
        const list = tracks.get(key) ?? [];
        tracks.set(key, list);
        list.push({ ts: slice.startNs, kind: 'B', slice, at: 2 * order }, { ts: slice.startNs + slice.durationNs, kind: 'E', at: 2 * order + 1 });
      });
      for (const [key, events] of tracks) {
        events.sort((a, b) => a.ts - b.ts || a.at - b.at);
        const stack = [];
        for (const e of events) {
          if (e.kind === 'B') stack.push(e);
          else {
            const b = stack.pop();
            assert.ok(b, `${key}: an end with nothing open`);
            assert.equal(e.ts - b.ts, b.slice.durationNs, `${key}: the end closes the slice it belongs to`);
          }
        }
        assert.equal(stack.length, 0);
      }
    }),
    { numRuns: 400, seed: SEED },
  );
});

test('a child drawn outside its parent gets one arrow from it; a child drawn inside gets none', () => {
  fc.assert(
    fc.property(steps, (plan) => {
      const { drawn, all } = run(plan);
      const place = new Map(drawn.map(({ slice }) => [Number(slice.args.find(([k]) => k === 'spanId')[2]), { threadId: slice.threadId, lane: slice.lane, startNs: slice.startNs, endNs: slice.startNs + slice.durationNs }]));
      const arrows = new Map();
      for (const { slice, flows } of drawn) {
        const self = Number(slice.args.find(([k]) => k === 'spanId')[2]);
        for (const f of flows) {
          const child = f.fromThis ? Number(f.id) : self;
          const parent = all.get(child).parent;
          assert.equal(Number(f.id), child, 'an arrow is named by its child');
          if (f.fromThis) assert.equal(parent, self);
          assert.deepEqual(f.other, place.get(f.fromThis ? child : parent));
          assert.ok(!arrows.has(child), `one arrow to ${child}`);
          arrows.set(child, parent);
        }
      }
      for (const [id, s] of all) {
        if (s.parent === 0) continue;
        const c = place.get(id);
        const p = place.get(s.parent);
        const inside = c.threadId === p.threadId && c.lane === p.lane && c.startNs >= p.startNs && c.endNs <= p.endNs;
        assert.equal(arrows.get(id), inside ? undefined : s.parent, `span ${id} (parent ${s.parent}) ${inside ? 'inside' : 'outside'} its parent`);
      }
    }),
    { numRuns: 400, seed: SEED },
  );
});

test('a child that lies within its parent on the same thread, with no sibling overlapping it, is drawn inside the parent', () => {
  // Requests overlapping on one thread, each with queries one after another: every query nests in its request.
  const drawn = [];
  const slices = new SpanSlices((slice, flows) => drawn.push({ slice, flows }));
  const requests = 20;
  for (let r = 1; r <= requests; r++) slices.begin(begin(r, 0, 0, r));
  let ts = 100;
  let id = 1000;
  for (let q = 0; q < 3; q++) {
    for (let r = 1; r <= requests; r++) {
      slices.begin(begin(++id, r, 0, ts++));
      slices.end(end(id, 0, ts++));
    }
  }
  for (let r = requests; r >= 1; r--) slices.end(end(r, 0, ts++));
  const lane = new Map(drawn.map(({ slice }) => [Number(slice.args[0][2]), slice.lane]));
  for (const { slice } of drawn.filter((d) => Number(d.slice.args[0][2]) > 1000)) assert.equal(slice.lane, lane.get(Number(slice.args[1][2])));
  assert.equal(new Set(lane.values()).size, requests, 'one lane per request in flight');
  assert.ok(drawn.every(({ flows }) => flows.length === 0));
});

test('memory stays bounded: past 65,536 open spans the oldest is drawn unfinished, and its late end is not a span', () => {
  const drawn = [];
  const slices = new SpanSlices((slice) => drawn.push(slice));
  for (let i = 1; i <= 65_537; i++) slices.begin(begin(i, 0, 0, i));
  assert.equal(drawn.length, 1);
  assert.equal(drawn[0].args[0][2], 1n);
  assert.ok(drawn[0].args.some(([k, , v]) => k === 'unfinished' && v === true));
  assert.equal(slices.end(end(1, 0, 70_000)), false, 'the end of a span no longer held is shown as it is');
});
