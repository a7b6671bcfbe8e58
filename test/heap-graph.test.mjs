// Issue 11, the tool's side without a target: dominators (Lengauer–Tarjan against the textbook
// dataflow definition on random graphs), retained sizes per type, and the .gcdump file (round trip,
// damage, wrong files). Random graphs use a fixed seed (HEAP_GRAPH_SEED replays).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { dominatorTree } from '../dist/heap/dominator-tree.js';
import { readGcdump, writeGcdump, GcdumpFileError } from '../dist/heap/gcdump-file.js';
import { typeStatistics, STATISTICS_COLUMNS } from '../dist/heap/type-statistics.js';
import { graphOf } from './helpers/heap-graph-of.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const SEED = Number(process.env.HEAP_GRAPH_SEED ?? 11_2026_11_23);
const dir = await tempDir({ after });

/** Dominator sets by the dataflow definition (iterate to the fixed point), then each node's immediate one. */
function naiveIdom(n, root, edges) {
  const preds = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) preds[b].push(a);
  const reach = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [a, b] of edges) if (reach.has(a) && !reach.has(b)) grew = reach.add(b) && true;
  }
  const all = [...reach];
  const dom = new Map(all.map((v) => [v, v === root ? new Set([root]) : new Set(all)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const v of all) {
      if (v === root) continue;
      let next;
      for (const p of preds[v]) {
        if (!reach.has(p)) continue;
        next = next ? new Set([...next].filter((x) => dom.get(p).has(x))) : new Set(dom.get(p));
      }
      next.add(v);
      if (next.size !== dom.get(v).size) {
        dom.set(v, next);
        changed = true;
      }
    }
  }
  const idom = new Array(n).fill(-1);
  idom[root] = root;
  for (const v of all) {
    if (v === root) continue;
    // The strict dominator that every other strict dominator dominates: the one with the most dominators.
    let best = -1;
    for (const d of dom.get(v)) if (d !== v && (best < 0 || dom.get(d).size > dom.get(best).size)) best = d;
    idom[v] = best;
  }
  return idom;
}

function csr(n, edges) {
  const sorted = [...edges].sort((a, b) => a[0] - b[0]);
  const first = new Uint32Array(n + 1);
  for (const [a] of sorted) first[a + 1]++;
  for (let i = 0; i < n; i++) first[i + 1] += first[i];
  return { first, to: Uint32Array.from(sorted.map((e) => e[1])), type: new Uint8Array(sorted.length), never: -1, rootOnly: -1 };
}

test('Lengauer–Tarjan gives the same immediate dominators as the dataflow definition on random graphs', () => {
  const graph = fc.integer({ min: 1, max: 40 }).chain((n) =>
    fc.record({ n: fc.constant(n), edges: fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 4 }) }),
  );
  fc.assert(
    fc.property(graph, ({ n, edges }) => {
      const tree = dominatorTree(n, 0, csr(n, edges));
      assert.deepEqual([...tree.idom], naiveIdom(n, 0, edges));
      assert.equal(tree.order[0], 0);
    }),
    { seed: SEED, numRuns: 400 },
  );
});

test('a chain a million nodes deep (no recursion)', () => {
  const n = 1_000_000;
  const first = new Uint32Array(n + 1);
  const to = new Uint32Array(n - 1);
  for (let i = 0; i < n; i++) first[i + 1] = Math.min(i + 1, n - 1);
  for (let i = 0; i < n - 1; i++) to[i] = i + 1;
  const tree = dominatorTree(n, 0, { first, to, type: new Uint8Array(n - 1), never: -1, rootOnly: -1 });
  assert.equal(tree.order.length, n);
  assert.equal(tree.idom[n - 1], n - 2);
});

const strings = ['', 'Foo', 'Bar', 'Weakling', 'next', 'system / Context', 'caf\u00e9 \ud83d\ude00'];
// 0 root → 1 Foo → 2 Foo → 3 Foo (a chain of one type); root → 4 Bar -weak-> 5 Weakling, root → 6 (closure) → 5;
// 7 Bar is unreachable; 8 is a hidden node the root reaches by a shortcut from 4 (not retaining).
const sample = graphOf(
  [
    { type: 'synthetic', name: '', self: 0, edges: [['element', 1, 1], ['element', 2, 4], ['element', 3, 6], ['shortcut', 4, 8]] },
    { type: 'object', name: 'Foo', self: 10, edges: [['property', 4, 2]] },
    { type: 'object', name: 'Foo', self: 20, edges: [['property', 4, 3]] },
    { type: 'object', name: 'Foo', self: 40, edges: [] },
    { type: 'object', name: 'Bar', self: 5, edges: [['weak', 1, 5], ['shortcut', 1, 8]] },
    { type: 'object', name: 'Weakling', self: 7, edges: [] },
    { type: 'closure', name: 'caf\u00e9 \ud83d\ude00', self: 3, edges: [['context', 4, 5]] },
    { type: 'object', name: 'Bar', self: 100, edges: [['property', 4, 1]] },
    { type: 'hidden', name: 'system / Context', self: 1, edges: [] },
  ],
  strings,
);

test('retained sizes per type: weak and non-root shortcut edges do not retain; a type dominating itself is counted once', () => {
  const s = typeStatistics(sample);
  const row = (name) => s.types.find((t) => t.name === name);
  assert.equal(s.nodes, 9);
  assert.equal(s.edges, 10);
  assert.equal(s.selfBytes, 186);
  assert.equal(s.unreachable, 1);
  assert.deepEqual(row('Foo'), { name: 'Foo', count: 3, selfBytes: 70, retainedBytes: 70 });
  // Node 7 (unreachable) retains only itself; node 4 does not retain 5 (weak) or 8 (shortcut from a non-root).
  assert.deepEqual(row('Bar'), { name: 'Bar', count: 2, selfBytes: 105, retainedBytes: 105 });
  assert.deepEqual(row('(closure)'), { name: '(closure)', count: 1, selfBytes: 3, retainedBytes: 10 });
  assert.deepEqual(row('(system)'), { name: '(system)', count: 1, selfBytes: 1, retainedBytes: 1 });
  assert.equal(row('(synthetic)').retainedBytes, 86);
});

test('.gcdump round trip: every column, string and count; narrow columns; only the asked columns load', () => {
  const file = join(dir, 'sample.gcdump');
  writeGcdump(file, sample);
  const back = readGcdump(file);
  for (const kind of ['nodes', 'edges', 'locations']) {
    for (const [field, c] of sample.columns[kind]) assert.deepEqual([...back.column(kind, field)], [...c], `${kind}.${field}`);
  }
  assert.deepEqual([...Array(back.stringCount).keys()].map((i) => back.string(i)), strings);
  assert.deepEqual(back.snapshot, sample.snapshot);
  assert.deepEqual(back.origin, sample.origin);
  assert.ok(back.column('nodes', 'type') instanceof Uint8Array, 'small values are stored as bytes');
  const some = readGcdump(file, STATISTICS_COLUMNS);
  assert.equal(some.columns.edges.has('name_or_index'), false);
  assert.deepEqual(typeStatistics(some), typeStatistics(sample));
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp')), [], 'no temporary file left');
});

test('.gcdump: damage anywhere, truncation, a newer format or another file type get one clear error', () => {
  const file = join(dir, 'damaged.gcdump');
  writeGcdump(file, sample);
  const good = readFileSync(file);
  const attempt = (bytes) => {
    writeFileSync(file, bytes);
    return assert.throws(() => readGcdump(file), GcdumpFileError);
  };
  const at = (offset) => {
    const b = Buffer.from(good);
    b[offset] ^= 0x40;
    writeFileSync(file, b);
    try {
      readGcdump(file);
      return 'read';
    } catch (e) {
      assert.ok(e instanceof GcdumpFileError, `byte ${offset}: ${e}`);
      return e.message;
    }
  };
  // Every byte of the header and of every section is covered by a checksum (padding aside).
  let caught = 0;
  for (let i = 0; i < good.length; i++) if (at(i) !== 'read') caught++;
  assert.ok(caught > good.length * 0.9, `${caught} of ${good.length} flipped bytes detected`);
  assert.match(at(good.length - 20), /damaged \(section strings\.offsets fails its checksum\)|damaged/);
  attempt(good.subarray(0, good.length - 9));
  const newer = Buffer.from(good);
  newer.writeUInt32LE(2, 8);
  writeFileSync(file, newer);
  assert.throws(() => readGcdump(file), /format 2\.x; this tracepipe reads 1\.x/);
  writeFileSync(file, '{"snapshot":{}}');
  assert.throws(() => readGcdump(file), /not a tracepipe \.gcdump file/);
  assert.throws(() => readGcdump(join(dir, 'missing.gcdump')), /no such file/);
  assert.equal(existsSync(join(dir, 'missing.gcdump')), false);
});

/** Runtime.HeapSnapshot events for `graph` as the provider writes them (bulk payloads of `per` records). */
function eventsOf(graph, { session = 7, snapshot = 3, per = 2 } = {}) {
  const ev = (name, fields) => ({ provider: 'Runtime.HeapSnapshot', name, fields });
  const varints = (values) => {
    const out = [];
    for (let v of values) {
      while (v > 127) {
        out.push((v % 128) | 128);
        v = Math.floor(v / 128);
      }
      out.push(v);
    }
    return Uint8Array.from(out);
  };
  const bulk = (name, kind, fields, count) => {
    const list = [];
    for (let first = 0; first < count; first += per) {
      const n = Math.min(per, count - first);
      const values = [];
      for (let i = first; i < first + n; i++) for (const f of fields) values.push(graph.column(kind, f)[i]);
      list.push(ev(name, { snapshot, first, count: n, values: varints(values) }));
    }
    return list;
  };
  const m = graph.snapshot.meta;
  const strings = [];
  for (let i = 0; i < graph.stringCount; i++) {
    const b = new TextEncoder().encode(graph.string(i));
    strings.push(...varints([b.length]), ...b);
  }
  return [
    ev('SnapshotBegin', { snapshot, session, nodeCount: graph.nodeCount, edgeCount: graph.edgeCount, meta: JSON.stringify(graph.snapshot) }),
    ...bulk('Nodes', 'nodes', m.node_fields, graph.nodeCount),
    ...bulk('Edges', 'edges', m.edge_fields, graph.edgeCount),
    ...bulk('Locations', 'locations', m.location_fields, graph.locationCount),
    ev('Strings', { snapshot, first: 0, count: strings.length, values: Uint8Array.from(strings) }),
    ev('SnapshotEnd', { snapshot, session, nodes: graph.nodeCount, edges: graph.edgeCount, locations: graph.locationCount, strings: graph.stringCount, stringBytes: strings.length, skippedValues: 0, durationMs: 5, error: '' }),
  ];
}

test('the graph builder: a faithful rebuild, another session\'s snapshot ignored, and every kind of damage refused', async () => {
  const { HeapGraphBuilder, SnapshotStreamError } = await import('../dist/heap/heap-graph-builder.js');
  const build = (events) => {
    const b = new HeapGraphBuilder(7, { pid: 1, argv: [], nodeVersion: 'v20' });
    for (const e of events) b.event(e);
    return b.finish();
  };
  const good = eventsOf(sample);
  const other = eventsOf(sample, { session: 8, snapshot: 4 }).map((e) => (e.name === 'SnapshotEnd' ? { ...e, fields: { ...e.fields, error: 'not ours' } } : e));
  const g = build([...other.slice(0, 3), ...good, ...other.slice(3)]);
  assert.deepEqual(typeStatistics(g), typeStatistics(sample));
  assert.deepEqual([...g.column('edges', 'to_node')], [...sample.column('edges', 'to_node')]);
  assert.equal(g.string(6), 'caf\u00e9 \ud83d\ude00');
  const nodesAt = good.findIndex((e) => e.name === 'Nodes');
  const edgesAt = good.findIndex((e) => e.name === 'Edges');
  const endAt = good.length - 1;
  const damaged = [
    [good.filter((_, i) => i !== nodesAt + 1), /arrived where 2 was due/],
    [good.filter((_, i) => i !== endAt), /ended in the middle of the heap snapshot \(9 of 9 nodes, 10 of 10 edges\)/],
    [good.slice(0, edgesAt), /ended in the middle/],
    [[good[0], ...good.slice(1).map((e) => (e.name === 'Edges' && e.fields.first === 0 ? { ...e, fields: { ...e.fields, values: Uint8Array.of(3, 4, 200) } } : e))], /is damaged/],
    [good.map((e) => (e.name === 'Edges' && e.fields.first === 0 ? { ...e, fields: { ...e.fields, values: Uint8Array.of(1, 1, 1, 3, 4, 99) } } : e)), /edges record 1 points at node 99, past the 9 nodes/],
    [good.map((e, i) => (i === endAt ? { ...e, fields: { ...e.fields, error: 'V8 ran out of memory' } } : e)), /could not finish the heap snapshot: V8 ran out of memory/],
    [good.map((e, i) => (i === endAt ? { ...e, fields: { ...e.fields, strings: 8 } } : e)), /7 strings arrived, the target wrote 8/],
    [good.map((e, i) => (i === 0 ? { ...e, fields: { ...e.fields, meta: JSON.stringify({ ...sample.snapshot, node_count: 10 }) } } : e)), /disagree on the counts/],
    [[{ ...good[endAt], fields: { ...good[endAt].fields, snapshot: 9, error: 'inspector unavailable' } }], /could not take the heap snapshot: inspector unavailable/],
    [[], /ended before the heap snapshot began/],
  ];
  for (const [events, message] of damaged) assert.throws(() => build(events), (e) => e instanceof SnapshotStreamError && message.test(e.message), String(message));
});
