// Heap graphs of a known shape and any size, built straight into typed columns (the .gcdump layout),
// with their immediate dominators known by construction. Every object also points at one shared
// hidden class, as in V8 (the node with a million retainers that made the old algorithm quadratic).
import { HeapGraph } from '../../dist/heap/heap-graph.js';

// V8's own lists (V8 11), which @vscode/v8-heap-parser insists on.
const NODE_TYPES = ['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic', 'concatenated string', 'sliced string', 'symbol', 'bigint', 'object shape', 'wasm object'];
const EDGE_TYPES = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
const STRINGS = ['', 'system / Map', 'map', 'ListNode', 'next', 'head', 'TreeNode', 'left', 'right', 'tree', 'Holder', 'Shared', 'shared', 'CycleA', 'CycleB', 'partner', 'Item', 'items', 'holders', 'pairs'];
const str = (s) => STRINGS.indexOf(s);
const NT = (t) => NODE_TYPES.indexOf(t);
const ET = (t) => EDGE_TYPES.indexOf(t);
export const SELF = { object: 32, array: 16, map: 40 };

/** Columns filled node by node: each node's edges right after it, as V8 lays them out. */
class Columns {
  constructor(nodes, edges) {
    this.n = { type: new Uint8Array(nodes), name: new Uint32Array(nodes), id: new Uint32Array(nodes), self_size: new Uint32Array(nodes), edge_count: new Uint32Array(nodes), trace_node_id: new Uint8Array(nodes), detachedness: new Uint8Array(nodes) };
    this.e = { type: new Uint8Array(edges), name_or_index: new Uint32Array(edges), to_node: new Uint32Array(edges) };
    this.nodes = 0;
    this.edges = 0;
  }
  node(type, name, self) {
    const i = this.nodes++;
    this.n.type[i] = NT(type);
    this.n.name[i] = str(name);
    this.n.id[i] = i * 2 + 1;
    this.n.self_size[i] = self;
    return i;
  }
  edge(from, type, nameOrIndex, to) {
    const k = this.edges++;
    this.n.edge_count[from]++;
    this.e.type[k] = ET(type);
    this.e.name_or_index[k] = typeof nameOrIndex === 'string' ? str(nameOrIndex) : nameOrIndex;
    this.e.to_node[k] = to;
  }
  graph() {
    if (this.nodes !== this.n.type.length || this.edges !== this.e.type.length) throw new Error(`sized for ${this.n.type.length}/${this.e.type.length}, built ${this.nodes}/${this.edges}`);
    const enc = STRINGS.map((s) => new TextEncoder().encode(s));
    const offsets = new Uint32Array(STRINGS.length + 1);
    enc.forEach((b, i) => (offsets[i + 1] = offsets[i] + b.length));
    const bytes = new Uint8Array(offsets[STRINGS.length]);
    enc.forEach((b, i) => bytes.set(b, offsets[i]));
    const meta = {
      node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
      node_types: [NODE_TYPES, 'string', 'number', 'number', 'number', 'number', 'number'],
      edge_fields: ['type', 'name_or_index', 'to_node'],
      edge_types: [EDGE_TYPES, 'string_or_number', 'node'],
      trace_function_info_fields: ['function_id', 'name', 'script_name', 'script_id', 'line', 'column'],
      trace_node_fields: ['id', 'function_info_index', 'count', 'size', 'children'],
      sample_fields: ['timestamp_us', 'last_assigned_id'],
      location_fields: ['object_index', 'script_id', 'line', 'column'],
    };
    return new HeapGraph(
      { meta, node_count: this.nodes, edge_count: this.edges, trace_function_count: 0 },
      { pid: 1, argv: ['node', 'shapes.js'], nodeVersion: 'v20', takenAtMs: 0, durationMs: 1, skippedValues: 0 },
      this.nodes,
      this.edges,
      0,
      { nodes: new Map(Object.entries(this.n)), edges: new Map(Object.entries(this.e)), locations: new Map(['object_index', 'script_id', 'line', 'column'].map((f) => [f, new Uint32Array(0)])) },
      bytes,
      offsets,
    );
  }
}

/**
 * Node 0 is the root, node 1 the shared hidden class (the root points at it, so it is the root's);
 * then the shape. Returns the graph and, per node, its immediate dominator as the shape defines it.
 */
function build(nodes, edges, fill) {
  const c = new Columns(nodes, edges);
  const idom = new Int32Array(nodes);
  const root = c.node('synthetic', '', 0);
  const map = c.node('hidden', 'system / Map', SELF.map);
  c.edge(root, 'element', 1, map);
  fill(c, idom, (i) => c.edge(i, 'internal', 'map', map));
  return { graph: c.graph(), idom };
}

export const SHAPES = {
  /** A linked list of n objects: root → head → next → ... */
  chain: (n) =>
    build(n + 2, 1 + 1 + n + (n - 1), (c, idom, withMap) => {
      c.edge(0, 'property', 'head', 2);
      for (let i = 0; i < n; i++) {
        const v = c.node('object', 'ListNode', SELF.object);
        withMap(v);
        if (i < n - 1) c.edge(v, 'property', 'next', v + 1);
        idom[v] = i === 0 ? 0 : v - 1;
      }
    }),
  /** A complete binary tree of n objects (node k's children are 2k+1 and 2k+2). */
  tree: (n) =>
    build(n + 2, 1 + 1 + n + (n - 1), (c, idom, withMap) => {
      c.edge(0, 'property', 'tree', 2);
      for (let k = 0; k < n; k++) {
        const v = c.node('object', 'TreeNode', SELF.object);
        withMap(v);
        if (2 * k + 1 < n) c.edge(v, 'property', 'left', 2 + 2 * k + 1);
        if (2 * k + 2 < n) c.edge(v, 'property', 'right', 2 + 2 * k + 2);
        idom[v] = k === 0 ? 0 : 2 + ((k - 1) >> 1);
      }
    }),
  /** One object retained by n holders, all elements of one array. */
  fanIn: (n) =>
    build(n + 4, 1 + 1 + n + 2 * n + 1, (c, idom, withMap) => {
      c.edge(0, 'property', 'holders', 2);
      const array = c.node('array', '', SELF.array);
      const shared = n + 3;
      for (let i = 0; i < n; i++) c.edge(array, 'element', i, 3 + i);
      idom[array] = 0;
      for (let i = 0; i < n; i++) {
        const v = c.node('object', 'Holder', SELF.object);
        withMap(v);
        c.edge(v, 'property', 'shared', shared);
        idom[v] = array;
      }
      c.node('object', 'Shared', SELF.object);
      withMap(shared);
      idom[shared] = array;
    }),
  /** n cycles of two objects (CycleA ⇄ CycleB), each A an element of one array. */
  cycles: (n) =>
    build(2 * n + 3, 1 + 1 + n + 4 * n, (c, idom, withMap) => {
      c.edge(0, 'property', 'pairs', 2);
      const array = c.node('array', '', SELF.array);
      for (let i = 0; i < n; i++) c.edge(array, 'element', i, 3 + 2 * i);
      idom[array] = 0;
      for (let i = 0; i < n; i++) {
        const a = c.node('object', 'CycleA', SELF.object);
        withMap(a);
        c.edge(a, 'property', 'partner', a + 1);
        const b = c.node('object', 'CycleB', SELF.object);
        withMap(b);
        c.edge(b, 'property', 'partner', a);
        idom[a] = array;
        idom[b] = a;
      }
    }),
  /** n objects, each an element of one array. */
  flat: (n) =>
    build(n + 3, 1 + 1 + n + n, (c, idom, withMap) => {
      c.edge(0, 'property', 'items', 2);
      const array = c.node('array', '', SELF.array);
      for (let i = 0; i < n; i++) c.edge(array, 'element', i, 3 + i);
      idom[array] = 0;
      for (let i = 0; i < n; i++) {
        const v = c.node('object', 'Item', SELF.object);
        withMap(v);
        idom[v] = array;
      }
    }),
};
