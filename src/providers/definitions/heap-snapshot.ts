import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

const BULK_FIELDS = [
  ['snapshot', 'u32'],
  ['first', 'u32'],
  ['count', 'u32'],
  ['values', 'bytes'],
] as const;

/**
 * `Runtime.HeapSnapshot`: when a session enables it, a V8 heap snapshot of the main isolate, written
 * as bulk events while V8 produces it (docs/GCDUMP.md). Meant for a Block session: the snapshot is
 * far larger than any buffer, and a single lost event makes the graph unusable.
 */
export const runtimeHeapSnapshot = defineBuiltinProvider('Runtime.HeapSnapshot', {
  events: {
    SnapshotBegin: {
      id: 1,
      level: Level.Informational,
      fields: [['snapshot', 'u32'], ['session', 'u32'], ['nodeCount', 'u32'], ['edgeCount', 'u32'], ['meta', 'string']],
      doc: "V8's declared node and edge counts; meta is V8's `snapshot` object as JSON (field lists, node and edge types). session is the session whose enabling took the snapshot.",
    },
    Nodes: {
      id: 2,
      level: Level.Informational,
      fields: BULK_FIELDS,
      doc: 'Nodes first .. first+count-1: varints, one per node field in meta.node_fields order (type, name as a string id, V8 id, self size, edge count, ...).',
    },
    Edges: {
      id: 3,
      level: Level.Informational,
      fields: BULK_FIELDS,
      doc: "Edges first .. first+count-1, in V8's order (each node's edge_count edges, node by node): varints in meta.edge_fields order; to_node is a node index.",
    },
    Locations: {
      id: 4,
      level: Level.Informational,
      fields: BULK_FIELDS,
      doc: 'Source locations: varints in meta.location_fields order; object_index is a node index.',
    },
    Strings: {
      id: 5,
      level: Level.Informational,
      fields: BULK_FIELDS,
      doc: "Bytes first .. first+count-1 of the strings stream: each string (id 0, 1, ... in V8's order) as a varint byte length and UTF-8.",
    },
    SnapshotEnd: {
      id: 6,
      level: Level.Informational,
      fields: [
        ['snapshot', 'u32'],
        ['session', 'u32'],
        ['nodes', 'u32'],
        ['edges', 'u32'],
        ['locations', 'u32'],
        ['strings', 'u32'],
        ['stringBytes', 'f64'],
        ['skippedValues', 'f64'],
        ['durationMs', 'f64'],
        ['error', 'string'],
      ],
      doc: 'What was written (the reader checks it against what it read); skippedValues counts numbers of allocation-tracking sections not carried; error is empty on success.',
    },
  },
}, () => new URL('../heap-snapshot/heap-snapshot-provider.js', import.meta.url).href);
