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

/** Asserts that every lane's slices, matched like a call stack (by time, ties in written order), end where they began plus their duration. */
function assertLanesNest(slices) {
  const tracks = new Map();
  slices.forEach((slice, order) => {
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
}

/**
 * Span activity as a converter reads it: up to 3 threads, each with its own clock, their events
 * interleaved (stream order: one thread's events are in time order, another's may lag behind). A
 * step begins a span (a child of an open span of its thread or of another, or a root; some never
 * end) or ends one of the thread's open spans, parents often before their children.
 */
const mixedSteps = fc.record({
  maxOpen: fc.constantFrom(3, 8, 65_536),
  plan: fc.array(
    fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })), thread: fc.integer({ min: 0, max: 2 }), op: fc.integer({ min: 0, max: 99 }), pick: fc.nat() }),
    { maxLength: 400 },
  ),
});

test('property: for any mix of open, ended, nested and set-aside spans, on lagging threads, every span is drawn once and no two slices of a lane overlap without nesting', () => {
  fc.assert(
    fc.property(mixedSteps, ({ maxOpen, plan }) => {
      const drawn = [];
      const slices = new SpanSlices((slice, flows) => drawn.push({ slice, flows }), maxOpen);
      const clock = [0, 0, 0];
      const open = [[], [], []];
      const spans = new Map();
      let next = 1;
      for (const { dt, thread, op, pick } of plan) {
        const ts = (clock[thread] += dt);
        const mine = open[thread];
        if (op < 60 || mine.length === 0) {
          const pool = op % 5 === 0 ? open.flat() : mine;
          const parent = op % 7 === 0 || pool.length === 0 ? 0 : pool[pick % pool.length];
          const id = next++;
          spans.set(id, { thread, start: ts });
          // One span in ten never ends.
          if (op % 10 !== 3) mine.push(id);
          slices.begin(begin(id, parent, thread, ts));
        } else {
          const [id] = mine.splice(pick % mine.length, 1);
          // False when it was set aside past maxOpen: drawn already, unfinished.
          if (slices.end(end(id, thread, ts))) spans.get(id).end = ts;
        }
      }
      slices.finish(Math.max(...clock));
      const byId = new Map();
      for (const { slice } of drawn) {
        const id = Number(slice.args.find(([k]) => k === 'spanId')[2]);
        assert.ok(!byId.has(id), `span ${id} drawn once`);
        byId.set(id, slice);
      }
      assert.equal(byId.size, spans.size, 'every span drawn');
      for (const [id, s] of spans) {
        const slice = byId.get(id);
        assert.equal(slice.threadId, s.thread);
        assert.equal(slice.startNs, s.start);
        assert.ok(slice.durationNs >= 0);
        if (s.end !== undefined) assert.equal(slice.durationNs, s.end - s.start, `span ${id}: its duration`);
        assert.equal(slice.args.some(([k]) => k === 'unfinished'), s.end === undefined, `span ${id}: unfinished iff its end was not paired`);
      }
      assertLanesNest(drawn.map((d) => d.slice));
    }),
    { numRuns: 500, seed: SEED },
  );
});

/** A begin or end event that counts how often its timestamp is read: a tracker that walks its open spans again and again reads them again and again. */
function counted(event, reads) {
  const ts = event.timestampNs;
  return Object.defineProperty({ ...event }, 'timestampNs', {
    get() {
      reads.n++;
      return ts;
    },
  });
}

/** Span activity on one thread, `n` roots' worth; `kind` picks the mix. */
function scenario(kind, n, reads) {
  const events = [];
  let ts = 0;
  let id = 0;
  const b = (parent) => {
    events.push(counted(begin(++id, parent, 0, ++ts), reads));
    return id;
  };
  const e = (x) => events.push(counted(end(x, 0, ++ts), reads));
  for (let i = 0; i < n; i++) {
    if (kind === 'never ended') b(0);
    else if (kind === 'requests') {
      // A request with two children; every fourth ends before them, every eighth child never ends.
      const r = b(0);
      const c1 = b(r);
      const c2 = b(c1);
      if (i % 4 === 0) e(r);
      if (i % 8 !== 0) e(c2);
      e(c1);
      if (i % 4 !== 0) e(r);
    } else {
      // Overlapping requests whose children outlive them, one never-ended root in ten.
      const r = b(0);
      const c = b(r);
      if (i % 10 !== 0) e(r);
      if (i > 0 && i % 2 === 0) e(c - 2);
    }
  }
  return events;
}

test('scaling: the work per span does not grow with the spans open (timestamps read per span, n against 4n, for never-ended spans, requests and children that outlive their parent)', () => {
  const n = 1500;
  for (const kind of ['never ended', 'requests', 'outliving children']) {
    const perSpan = [n, 4 * n].map((size) => {
      const reads = { n: 0 };
      const events = scenario(kind, size, reads);
      let drawn = 0;
      const slices = new SpanSlices(() => drawn++);
      reads.n = 0;
      for (const ev of events) (ev.name.endsWith('.Begin') ? slices.begin(ev) : slices.end(ev));
      slices.finish(1e12);
      assert.equal(drawn, events.filter((ev) => ev.name.endsWith('.Begin')).length);
      return reads.n / drawn;
    });
    // Constant work per span reads about as many timestamps at 4n as at n; walking the open spans reads ~4× more.
    assert.ok(perSpan[1] < 1.5 * perSpan[0], `${kind}: ${perSpan[0].toFixed(1)} timestamp reads per span at ${n} spans, ${perSpan[1].toFixed(1)} at ${4 * n}`);
  }
});

test('a span set aside past the limit ends at its own thread\'s latest time, so a later span of that thread, while another thread is ahead in time, does not straddle it', () => {
  const drawn = [];
  const slices = new SpanSlices((slice) => drawn.push(slice));
  slices.begin(begin(1, 0, 0, 1));
  // Another thread, far ahead in time (stream order: its block came first).
  slices.begin(begin(2, 0, 1, 1e9));
  for (let i = 3; i <= 65_536; i++) slices.begin(begin(i, 0, 0, i));
  // The 65,537th open span: span 1, the oldest, is set aside.
  slices.begin(begin(65_537, 0, 0, 65_537));
  assert.equal(drawn.length, 1);
  slices.end(end(65_537, 0, 2e9));
  slices.finish(2e9);
  assertLanesNest(drawn);
  assert.equal(drawn[0].startNs + drawn[0].durationNs, 65_537, 'drawn to its thread\'s latest time');
});
