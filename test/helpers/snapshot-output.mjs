// What the heap snapshot parser emits, decoded back into plain arrays: the parser's SnapshotOutput for
// tests, checking on the way that each section's bulk payloads are contiguous and decode exactly.
import assert from 'node:assert/strict';
import { readVarints } from '../../dist/providers/heap-snapshot/bulk-codec.js';

/**
 * `output` is handed to a SnapshotJsonParser; `result()` then gives the header (parsed from the JSON
 * it came as), nodes, edges and locations (flat arrays of numbers, node offsets already node
 * indexes) and the strings.
 */
export function decodingOutput() {
  const got = { header: undefined, nodes: [], edges: [], locations: [] };
  const stringStream = [];
  const firsts = { nodes: 0, edges: 0, locations: 0, strings: 0 };
  let width = {};
  const bulk = (kind) => (first, count, payload) => {
    assert.equal(first, firsts[kind], `${kind} bulk events must be contiguous`);
    firsts[kind] += count;
    const values = new Float64Array(count * width[kind]);
    assert.ok(readVarints(payload, values, values.length), `${kind} payload decodes to exactly ${values.length} values`);
    for (const v of values) got[kind].push(v);
  };
  const output = {
    header: (h, json) => {
      got.header = JSON.parse(json);
      width = { nodes: h.meta.node_fields.length, edges: h.meta.edge_fields.length, locations: (h.meta.location_fields ?? ['object_index']).length };
    },
    nodes: bulk('nodes'),
    edges: bulk('edges'),
    locations: bulk('locations'),
    strings: (first, count, payload) => {
      assert.equal(first, firsts.strings);
      assert.equal(count, payload.length);
      firsts.strings += count;
      for (const b of payload) stringStream.push(b);
    },
  };
  const result = () => {
    // The strings stream: varint byte length, UTF-8; repeated.
    const bytes = Uint8Array.from(stringStream);
    const strings = [];
    const utf8 = new TextDecoder();
    for (let p = 0; p < bytes.length; ) {
      let len = 0;
      let mul = 1;
      for (;;) {
        assert.ok(p < bytes.length, 'the strings stream ends inside a length');
        const b = bytes[p++];
        len += (b & 127) * mul;
        if (b < 128) break;
        mul *= 128;
      }
      strings.push(utf8.decode(bytes.subarray(p, p + len)));
      p += len;
    }
    return { ...got, strings };
  };
  return { output, result };
}

/** V8's own document (JSON.parse of a .heapsnapshot) in the shape `result()` gives: to_node as node indexes. */
export function fromV8Json(doc) {
  const m = doc.snapshot.meta;
  const width = m.node_fields.length;
  const to = m.edge_fields.indexOf('to_node');
  const ew = m.edge_fields.length;
  return { header: doc.snapshot, nodes: doc.nodes, edges: doc.edges.map((v, i) => (i % ew === to ? v / width : v)), strings: doc.strings };
}

/**
 * The objects of a snapshot (`result()` or `fromV8Json`) whose constructor is `name`, by V8 node id
 * (stable within a process, whichever snapshot): each with its edges as 'type name -> target id', sorted.
 */
export function objectsNamed(s, name) {
  const m = s.header.meta;
  const nw = m.node_fields.length;
  const ew = m.edge_fields.length;
  const [nType, nName, nId, nEdges] = ['type', 'name', 'id', 'edge_count'].map((f) => m.node_fields.indexOf(f));
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => m.edge_fields.indexOf(f));
  const nodeTypes = m.node_types[0];
  const edgeTypes = m.edge_types[0];
  const out = new Map();
  let edge = 0;
  for (let i = 0; i < s.nodes.length; i += nw) {
    const count = s.nodes[i + nEdges];
    if (nodeTypes[s.nodes[i + nType]] === 'object' && s.strings[s.nodes[i + nName]] === name) {
      const edges = [];
      for (let e = edge; e < edge + count; e++) {
        const type = edgeTypes[s.edges[e * ew + eType]];
        const n = s.edges[e * ew + eName];
        edges.push(`${type} ${type === 'element' || type === 'hidden' ? n : s.strings[n]} -> ${s.nodes[s.edges[e * ew + eTo] * nw + nId]}`);
      }
      out.set(s.nodes[i + nId], edges.sort());
    }
    edge += count;
  }
  return out;
}

/**
 * Every call a SnapshotOutput gets, in order, payloads copied (base64): two producers of the same
 * JSON are compared with it byte for byte, payload boundaries included.
 */
export function recordingOutput() {
  const calls = [];
  const record = (kind) => (first, count, payload) => void calls.push([kind, first, count, Buffer.from(payload).toString('base64')]);
  const output = { header: (h, json) => void calls.push(['header', json]), nodes: record('nodes'), edges: record('edges'), locations: record('locations'), strings: record('strings') };
  return { calls, output };
}

const META = {
  node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
  node_types: [['hidden', 'object'], 'string', 'number', 'number', 'number'],
  edge_fields: ['type', 'name_or_index', 'to_node'],
  edge_types: [['element', 'property'], 'string_or_number', 'node'],
  location_fields: ['object_index', 'script_id', 'line', 'column'],
};

/**
 * A small snapshot document in V8's layout: 3 nodes (numbers past 2^32 and up to 2^53 - 1 among
 * them, unless `nodes` replaces them), 2 edges, 2 locations, `strings`; `extra` keys before the
 * sections, which come in V8's order or, with `order: 'reverse'`, the other way round.
 */
export function snapshotDocument({ strings, extra = '', order = 'v8', nodes = '[0,0,1,0,2\n,1,1,3,4294967296,0\n,1,2,5,9007199254740991,0]' }) {
  const snapshot = JSON.stringify({ meta: META, node_count: 3, edge_count: 2, trace_function_count: 0 });
  const sections = {
    nodes,
    edges: '[1,1,5\n,0,7,10]',
    locations: '[5,1,20,4\n,10,2,0,0]',
    strings: JSON.stringify(strings),
  };
  const keys = order === 'v8' ? ['nodes', 'edges', 'locations', 'strings'] : ['strings', 'locations', 'edges', 'nodes'];
  return `{"snapshot":${snapshot},\n${extra}${keys.map((k) => `"${k}":${sections[k]}`).join(',\n')}}`;
}
