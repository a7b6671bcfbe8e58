// Heap graphs built by hand, for tests whose answer must be known in advance.
import { HeapGraph } from '../../dist/heap/heap-graph.js';

/** A HeapGraph from plain lists: nodes [type, name, self] with their edges [type, name, to]; `origin` says where it was taken. */
export function graphOf(nodes, strings, origin = { pid: 1, argv: ['node', 'x.js'], nodeVersion: 'v20', takenAtMs: 0, durationMs: 1, skippedValues: 0 }) {
  const nodeTypes = ['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic'];
  const edgeTypes = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
  const meta = {
    node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
    node_types: [nodeTypes, 'string', 'number', 'number', 'number'],
    edge_fields: ['type', 'name_or_index', 'to_node'],
    edge_types: [edgeTypes, 'string_or_number', 'node'],
    location_fields: ['object_index', 'script_id', 'line', 'column'],
  };
  const edges = nodes.flatMap((n) => n.edges);
  // Each name's first index, as indexOf finds it, without a scan of every string per node (70,000 of each: ~10 s of CPU).
  const stringIndex = new Map();
  strings.forEach((s, i) => stringIndex.has(s) || stringIndex.set(s, i));
  const col = (list) => Uint32Array.from(list);
  const enc = strings.map((s) => new TextEncoder().encode(s));
  const offsets = new Float64Array(strings.length + 1);
  enc.forEach((b, i) => (offsets[i + 1] = offsets[i] + b.length));
  const bytes = new Uint8Array(offsets[strings.length]);
  enc.forEach((b, i) => bytes.set(b, offsets[i]));
  return new HeapGraph(
    { meta, node_count: nodes.length, edge_count: edges.length, trace_function_count: 0 },
    origin,
    nodes.length,
    edges.length,
    1,
    {
      nodes: new Map([
        ['type', col(nodes.map((n) => nodeTypes.indexOf(n.type)))],
        ['name', col(nodes.map((n) => stringIndex.get(n.name) ?? -1))],
        ['id', col(nodes.map((_, i) => i * 2 + 1))],
        ['self_size', Float64Array.from(nodes.map((n) => n.self))],
        ['edge_count', col(nodes.map((n) => n.edges.length))],
      ]),
      edges: new Map([
        ['type', col(edges.map((e) => edgeTypes.indexOf(e[0])))],
        ['name_or_index', col(edges.map((e) => e[1]))],
        ['to_node', col(edges.map((e) => e[2]))],
      ]),
      locations: new Map([['object_index', col([3])], ['script_id', col([7])], ['line', col([1])], ['column', col([2])]]),
    },
    bytes,
    offsets,
  );
}
