// What a thread ran during an interval (src/analysis/cpu-during.ts) and the call tree of its samples
// (src/analysis/call-tree.ts), against a reference that keeps every sample and intersects each
// sample's time [timestamp, timestamp + weight) with the interval the obvious way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CpuProfileBuilder, framesOf, functionTimes } from '../dist/analysis/cpu-profile.js';
import { cpuDuring } from '../dist/analysis/cpu-during.js';
import { callTree } from '../dist/analysis/call-tree.js';

const SEED = Number(process.env.TRACEPIPE_FUZZ_SEED ?? 20261126);
const P = 'Runtime.CpuSampler';
const NAMES = ['a', 'b', 'c', 'd'];

const event = (name, threadId, timestampNs, fields) => ({ provider: P, name, threadId, timestampNs, fields });

/**
 * A profile of up to two threads at a 1000 ns interval: samples at random gaps (0, around the
 * interval, or long enough to count as unsampled), random stacks of up to 4 frames from 4 functions
 * (recursion included), one in twenty samples on a stack never defined.
 */
const plans = fc.array(
  fc.record({ thread: fc.integer({ min: 0, max: 1 }), gap: fc.oneof(fc.constant(0), fc.integer({ min: 500, max: 1500 }), fc.integer({ min: 4001, max: 20000 })), stack: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }), unresolved: fc.integer({ min: 0, max: 19 }) }),
  { minLength: 1, maxLength: 150 },
);

function profileOf(plan) {
  const b = new CpuProfileBuilder();
  const ts = [0, 0];
  const defined = [new Map(), new Map()];
  let id = 1;
  const frameIds = NAMES.map(() => id++);
  for (const t of [0, 1]) {
    b.add(event('SamplerStarted', t, 0, { thread: t, intervalUs: 1, route: 'test' }));
    NAMES.forEach((n, i) => b.add(event('Frame', t, 0, { frameId: frameIds[i], functionName: n, url: 'file:///x.js', line: i + 1, column: 1 })));
  }
  for (const s of plan) {
    ts[s.thread] += s.gap;
    let parent = 0;
    for (const f of s.stack) {
      const key = `${f}:${parent}`;
      let stackId = defined[s.thread].get(key);
      if (stackId === undefined) {
        defined[s.thread].set(key, (stackId = id++));
        b.add(event('Stack', s.thread, ts[s.thread], { stackId, frameId: frameIds[f], parentId: parent }));
      }
      parent = stackId;
    }
    b.add(event('Sample', s.thread, ts[s.thread], { stackId: s.unresolved === 0 ? 1e6 : parent, thread: s.thread }));
  }
  return b.finish();
}

/** Per function name: self and total ns of `thread` over [from, to), from every sample's overlap with it. */
function reference(profile, thread, from, to) {
  const t = profile.threads.get(thread);
  const out = { sampledNs: 0, samples: 0, byName: {} };
  for (let i = 0; i < t.timestampNs.length; i++) {
    const a = t.timestampNs[i];
    const overlap = Math.min(a + t.weightNs[i], to) - Math.max(a, from);
    if (overlap <= 0 && !(t.weightNs[i] === 0 && a >= from && a < to)) continue;
    out.samples++;
    out.sampledNs += overlap;
    const frames = framesOf(profile, t.stack[i]).map((f) => profile.frames[f].functionName);
    frames.forEach((name, depth) => {
      const r = (out.byName[name] ??= { self: 0, total: 0 });
      if (depth === 0) r.self += overlap;
      if (frames.indexOf(name) === depth) r.total += overlap;
    });
  }
  return out;
}

const byName = (profile, functions) => Object.fromEntries(functions.map((f) => [profile.frames[f.frame].functionName, { self: f.selfNs, total: f.totalNs }]));

const intervals = fc.tuple(fc.integer({ min: -2000, max: 200_000 }), fc.integer({ min: 0, max: 200_000 }), fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 5 }));

test('property: functionTimes over a range counts each sample for its time inside it; adjacent ranges add up to their union', () => {
  fc.assert(
    fc.property(plans, intervals, (plan, [from, length, cuts]) => {
      const profile = profileOf(plan);
      const to = from + length;
      for (const t of profile.threads.values()) {
        const got = functionTimes(profile, [t], from, to);
        const want = reference(profile, t.thread, from, to);
        assert.equal(got.sampledNs, want.sampledNs);
        assert.equal(got.samples, want.samples);
        assert.ok(got.sampledNs <= length, `${got.sampledNs} ns sampled in a range of ${length}`);
        const names = byName(profile, got.functions);
        for (const [name, r] of Object.entries(want.byName)) assert.deepEqual(names[name] ?? { self: 0, total: 0 }, r, name);
        // The range cut into parts: self and total times of the parts add up to the whole's.
        const points = [from, ...cuts.map((c) => from + (c % (length + 1))).sort((a, b) => a - b), to];
        const sum = {};
        let sampled = 0;
        for (let i = 1; i < points.length; i++) {
          const part = functionTimes(profile, [t], points[i - 1], points[i]);
          sampled += part.sampledNs;
          for (const [name, r] of Object.entries(byName(profile, part.functions))) {
            const s = (sum[name] ??= { self: 0, total: 0 });
            s.self += r.self;
            s.total += r.total;
          }
        }
        assert.equal(sampled, got.sampledNs);
        for (const [name, r] of Object.entries(names)) if (r.total > 0) assert.deepEqual(sum[name], r, name);
      }
    }),
    { numRuns: 300, seed: SEED },
  );
});

test('property: cpuDuring partitions the interval: sampled + unsampled = its length, and the functions\' self times + time with no stack = sampled', () => {
  fc.assert(
    fc.property(plans, intervals, (plan, [from, length]) => {
      const profile = profileOf(plan);
      const to = from + length;
      for (const thread of [0, 1]) {
        const c = cpuDuring(profile, thread, from, to);
        assert.equal(c.threadSampled, true);
        assert.equal(c.sampledNs + c.unsampledNs, length);
        assert.equal(c.functions.reduce((n, f) => n + f.selfNs, 0) + c.noStackNs, c.sampledNs);
        assert.ok(c.functions.every((f, i) => f.selfSamples > 0 && (i === 0 || c.functions[i - 1].selfNs >= f.selfNs)), 'by self time, the largest first');
        const want = reference(profile, thread, from, to);
        for (const f of c.functions) assert.equal(f.selfNs, want.byName[profile.frames[f.frame].functionName].self);
      }
      const never = cpuDuring(profile, 7, from, to);
      assert.deepEqual([never.threadSampled, never.samples, never.unsampledNs, never.functions], [false, 0, length, []]);
    }),
    { numRuns: 300, seed: SEED },
  );
});

test('property: the call tree holds the function times: a function\'s self time is the sum over its nodes, its total the sum over its outermost nodes', () => {
  fc.assert(
    fc.property(plans, intervals, (plan, [from, length]) => {
      const profile = profileOf(plan);
      for (const t of profile.threads.values()) {
        for (const [lo, hi] of [[-Infinity, Infinity], [from, from + length]]) {
          const tree = callTree(profile, t, lo, hi);
          const times = functionTimes(profile, [t], lo, hi);
          assert.equal(tree.sampledNs, times.sampledNs);
          assert.equal(tree.samples, times.samples);
          const fromTree = {};
          let roots = 0;
          for (let s = 0; s < tree.selfNs.length; s++) {
            const frames = framesOf(profile, s);
            const r = (fromTree[frames[0]] ??= { self: 0, total: 0 });
            r.self += tree.selfNs[s];
            // Outermost node of its function on this path: no ancestor runs it.
            if (!frames.slice(1).includes(frames[0])) r.total += tree.totalNs[s];
            if (profile.stackParent[s] < 0) roots += tree.totalNs[s];
          }
          assert.equal(roots + tree.noStackNs, tree.sampledNs);
          for (const f of times.functions) assert.deepEqual(fromTree[f.frame], { self: f.selfNs, total: f.totalNs }, profile.frames[f.frame].functionName);
        }
      }
    }),
    { numRuns: 300, seed: SEED },
  );
});
