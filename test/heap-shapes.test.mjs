// Issue 25: dominators and retained sizes on every heap shape at a million objects and more (a long
// chain, a binary tree, a million retainers of one object, a million small cycles, a flat array),
// each built in the .gcdump layout with its dominators known by construction, and each also checked
// against an independent implementation: @vscode/v8-heap-parser's retained sizes on the exported
// .heapsnapshot. `gcdump report` runs end to end on each, bounded in time (the old algorithm was
// quadratic on the chain: still computing after ten minutes), and on a real process holding a list.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dominatorTree } from '../dist/heap/dominator-tree.js';
import { writeGcdump } from '../dist/heap/gcdump-file.js';
import { retainedSizes, typeStatistics } from '../dist/heap/type-statistics.js';
import { writeHeapSnapshot } from '../dist/export/heapsnapshot-writer.js';
import { SELF, SHAPES } from './helpers/heap-shapes.mjs';
import { startCli, startTarget, useTmpdir } from './helpers/ipc-processes.mjs';

const N = Number(process.env.HEAP_SHAPES_OBJECTS ?? 1_000_000);
const heapParser = createRequire(import.meta.url)('@vscode/v8-heap-parser');
const dir = await useTmpdir(after);
const O = SELF.object;

/** Per shape: its classes' retained sizes, worked out by hand from the shape. */
const expected = {
  chain: { ListNode: N * O },
  tree: { TreeNode: N * O },
  fanIn: { Holder: N * O, Shared: O, '(array)': SELF.array + (N + 1) * O },
  cycles: { CycleA: 2 * N * O, CycleB: N * O, '(array)': SELF.array + 2 * N * O },
  flat: { Item: N * O, '(array)': SELF.array + N * O },
};

function edgesOf(graph) {
  return { first: graph.firstEdges(), to: graph.column('edges', 'to_node'), type: graph.column('edges', 'type'), never: 6, rootOnly: 5 };
}

for (const [shape, make] of Object.entries(SHAPES)) {
  test(`${shape} of ${N.toLocaleString('en-US')}: the dominators the shape defines, the retained sizes @vscode/v8-heap-parser computes, and gcdump report in bounded time`, { timeout: 120_000 }, async (t) => {
    const { graph, idom: want } = make(N);
    const tree = dominatorTree(graph.nodeCount, 0, edgesOf(graph));
    assert.equal(tree.order.length, graph.nodeCount, 'every node reachable');
    assert.equal(tree.order[0], 0);
    let wrong = 0;
    let firstWrong = -1;
    for (let v = 0; v < graph.nodeCount; v++) {
      if (tree.idom[v] !== want[v] && wrong++ === 0) firstWrong = v;
    }
    assert.equal(wrong, 0, `node ${firstWrong}: dominator ${tree.idom[firstWrong]}, the shape says ${want[firstWrong]}`);
    // Each node after its dominator in `order`.
    const position = new Int32Array(graph.nodeCount);
    tree.order.forEach((v, i) => (position[v] = i));
    for (let v = 1; v < graph.nodeCount; v++) assert.ok(position[tree.idom[v]] < position[v]);

    const stats = typeStatistics(graph);
    for (const [name, bytes] of Object.entries(expected[shape])) assert.equal(stats.types.find((r) => r.name === name)?.retainedBytes, bytes, name);

    // The same heap as a .heapsnapshot, read by a parser nobody here wrote: the same retained size for
    // every class (the root's aside: that parser gives it none), and for the biggest objects under the root.
    const exported = join(dir, `${shape}.heapsnapshot`);
    writeHeapSnapshot(exported, graph);
    const theirs = heapParser.decode_bytes(readFileSync(exported));
    const retained = retainedSizes(graph, tree);
    for (const group of theirs.get_class_groups(0, 1000, false)) {
      const ours = stats.types.find((r) => r.name === group.name());
      if (group.name() !== '(synthetic)') assert.equal(Number(group.retained_size), ours.retainedBytes, `class ${group.name()}`);
    }
    for (const child of theirs.node_children(theirs.root_index, 0, 10, heapParser.WasmSortBy.RetainedSize)) {
      assert.equal(Number(child.retained_size), retained[child.index], `node ${child.index}`);
    }

    const file = join(dir, `${shape}.gcdump`);
    writeGcdump(file, graph);
    const report = await startCli(t, dir, ['gcdump', 'report', file, '--json']).done;
    assert.equal(report.code, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    assert.equal(json.unreachable, 0);
    const [top, bytes] = Object.entries(expected[shape]).sort((a, b) => b[1] - a[1])[0];
    assert.ok(json.byRetainedSize.some((r) => r.name === top && r.retainedBytes === bytes), JSON.stringify(json.byRetainedSize.slice(0, 3)));
  });
}

test('a real process holding a linked list: gcdump collect then report, every node counted once, the list head holding it all', { timeout: 300_000 }, async (t) => {
  const n = Number(process.env.HEAP_SHAPES_LIST ?? 300_000);
  const target = await startTarget(t, dir, { script: fileURLToPath(new URL('./fixtures/heap-target.mjs', import.meta.url)), args: ['shape', 'chain', String(n)] });
  const file = join(dir, 'list.gcdump');
  const c = await startCli(t, dir, ['gcdump', 'collect', '--pid', String(target.pid), '-o', file]).done;
  assert.equal(c.code, 0, c.stderr);
  const report = await startCli(t, dir, ['gcdump', 'report', file, '--json', '--top', '5']).done;
  assert.equal(report.code, 0, report.stderr);
  const row = JSON.parse(report.stdout).byRetainedSize.find((r) => r.name === 'ListNode');
  assert.ok(row, report.stdout);
  assert.equal(row.count, n);
  // The first node dominates the rest: the type retains its own bytes (each node once, not the list's
  // length times), and besides them only the hidden class that only its instances reach (V8's map
  // transitions are weak), all under one object.
  assert.ok(row.retainedBytes >= row.selfBytes && row.retainedBytes < row.selfBytes + 1024, `${row.retainedBytes} retained, ${row.selfBytes} self`);
  assert.equal(row.heldBy.bytes, row.retainedBytes);
});
