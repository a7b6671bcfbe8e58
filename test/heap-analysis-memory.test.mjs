// gcdump report's memory on big heaps: the dominator tree's arrays are handed on to the next phases
// instead of waiting on the GC, holders' ids are read from the file without the id column, and type
// indexes take two bytes while there are fewer than 65,536 types.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSync, readFileSync, writeFileSync, closeSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { dominatorTree } from '../dist/heap/dominator-tree.js';
import { GcdumpFileError, readGcdump, readNodeField, writeGcdump } from '../dist/heap/gcdump-file.js';
import { ScratchBuffers } from '../dist/heap/scratch-buffers.js';
import { classify, retainedSizes, retainingEdges, STATISTICS_COLUMNS, typeStatistics } from '../dist/heap/type-statistics.js';
import { graphOf } from './helpers/heap-graph-of.mjs';
import { SHAPES } from './helpers/heap-shapes.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const dir = await tempDir({ after });

/** Scratch buffers that remember every buffer they handed out. */
function countingScratch() {
  const scratch = new ScratchBuffers();
  const buffers = new Set();
  for (const kind of ['int32', 'uint32', 'float64', 'uint8']) {
    const take = scratch[kind].bind(scratch);
    scratch[kind] = (length) => {
      const a = take(length);
      buffers.add(a.buffer);
      return a;
    };
  }
  const bytes = () => [...buffers].reduce((sum, b) => sum + b.byteLength, 0);
  return { scratch, bytes };
}

test('scratch buffers: a given-back buffer is reused (the smallest that fits), a new one only when none fits; views are the asked length', () => {
  const scratch = new ScratchBuffers();
  const big = new Int32Array(100);
  const small = new Int32Array(10);
  scratch.give(big, small, small);
  const a = scratch.float64(5);
  assert.equal(a.buffer, small.buffer, 'the smallest that holds 40 bytes');
  assert.equal(a.length, 5);
  const b = scratch.uint8(20);
  assert.equal(b.buffer, big.buffer);
  const c = scratch.int32(3);
  assert.notEqual(c.buffer, big.buffer);
  assert.notEqual(c.buffer, small.buffer, 'nothing spare: a new buffer');
});

for (const shape of ['chain', 'tree', 'fanIn']) {
  test(`${shape}: dominators take at most five words per node and one per retaining edge, and retained sizes (four bytes each under 4 GiB) take nothing new`, () => {
    const { graph, idom: want } = SHAPES[shape](100_000);
    const { scratch, bytes } = countingScratch();
    const edges = retainingEdges(graph, scratch);
    const tree = dominatorTree(graph.nodeCount, 0, edges, scratch, true);
    const words = 5 * (graph.nodeCount + 1) + graph.edgeCount;
    assert.ok(bytes() <= 4 * words, `${bytes()} bytes for ${graph.nodeCount} nodes and ${graph.edgeCount} edges: more than ${4 * words}`);
    assert.deepEqual([...tree.idom], [...want]);
    const before = bytes();
    const retained = retainedSizes(graph, tree, scratch);
    assert.ok(retained instanceof Uint32Array, 'a heap under 4 GiB: four bytes per retained size');
    assert.equal(bytes(), before, 'the retained sizes live in a buffer the dominators gave back');
    assert.deepEqual([...retained], [...retainedSizes(graph, tree)]);
  });
}

test('type indexes: two bytes per node below 65,536 types, widened with every index kept past that', () => {
  const many = 70_000;
  const strings = ['', ...Array.from({ length: many }, (_, i) => `T${i}`)];
  const nodes = [{ type: 'synthetic', name: '', self: 0, edges: Array.from({ length: many }, (_, i) => ['element', i, i + 1]) }];
  for (let i = 0; i < many; i++) nodes.push({ type: 'object', name: `T${i}`, self: 1, edges: [] });
  const wide = classify(graphOf(nodes, strings));
  assert.ok(wide.classOf instanceof Uint32Array);
  for (let v = 1; v <= many; v++) assert.equal(wide.names[wide.classOf[v]], `T${v - 1}`);
  const narrow = classify(graphOf(nodes.slice(0, 11).map((n, i) => (i === 0 ? { ...n, edges: n.edges.slice(0, 10) } : n)), strings));
  assert.ok(narrow.classOf instanceof Uint16Array);
  assert.deepEqual(narrow.names, ['(synthetic)', ...strings.slice(1, 11)]);
});

test('holders are named by the ids read from the file, without the id column; a damaged id section is refused', () => {
  const { graph } = SHAPES.fanIn(1000);
  const file = join(dir, 'fan-in.gcdump');
  writeGcdump(file, graph);
  const ids = graph.column('nodes', 'id');
  const some = [999, 0, graph.nodeCount - 1, 3];
  assert.deepEqual(readNodeField(file, 'id', some), some.map((v) => ids[v]));
  const g = readGcdump(file, STATISTICS_COLUMNS);
  assert.equal(g.columns.nodes.has('id'), false);
  const fromFile = typeStatistics(g, 3, (nodes) => readNodeField(file, 'id', nodes));
  assert.deepEqual(fromFile, typeStatistics(graph, 3));
  assert.ok(fromFile.types.some((t) => t.heldBy), 'some type has a holder');
  assert.throws(() => readNodeField(file, 'nope', [0]), (e) => e instanceof GcdumpFileError && /no nodes field 'nope'/.test(e.message));
  // Flip one byte of the id section: the checksum catches it.
  const header = JSON.parse(readFileSync(file).subarray(24, 24 + readFileSync(file).readUInt32LE(16)).toString());
  const section = header.sections.find((s) => s.section === 'nodes' && s.field === 'id');
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.from([0xff]), 0, 1, section.offset + 5);
  closeSync(fd);
  assert.throws(() => readNodeField(file, 'id', [0]), (e) => e instanceof GcdumpFileError && /nodes\.id fails its checksum/.test(e.message));
  writeFileSync(join(dir, 'not.gcdump'), 'hello');
  assert.throws(() => readNodeField(join(dir, 'not.gcdump'), 'id', [0]), (e) => e instanceof GcdumpFileError && /not a tracepipe \.gcdump/.test(e.message));
});

test('retained sizes of a heap over 4 GiB are eight bytes each, and exact', () => {
  const g = graphOf(
    [
      { type: 'synthetic', name: '', self: 0, edges: [['element', 0, 1]] },
      { type: 'object', name: 'Big', self: 3e9, edges: [['property', 1, 2]] },
      { type: 'object', name: 'Big', self: 3e9, edges: [] },
    ],
    ['', 'Big'],
  );
  const retained = retainedSizes(g, dominatorTree(g.nodeCount, 0, retainingEdges(g)));
  assert.ok(retained instanceof Float64Array);
  assert.deepEqual([...retained], [6e9, 6e9, 3e9]);
});
