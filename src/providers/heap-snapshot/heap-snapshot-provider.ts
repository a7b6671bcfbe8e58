import { isMainThread } from 'node:worker_threads';
import { Level } from '../../schema/level.js';
import { elapsedMs } from '../../schema/milliseconds.js';
import { defineProvider, type EnableContext } from '../../schema/provider.js';
import { isServiceThread } from '../service-thread.js';
import { NO_TOTALS, type ParseTotals, type SnapshotOutput } from './snapshot-json-parser.js';
import { snapshotAddonMissing, streamHeapSnapshot } from './snapshot-stream.js';

/** Snapshots taken by this process, numbered so a session can tell its own from another's. */
let lastSnapshot = 0;
let taking = false;
let warned = false;

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
export const runtimeHeapSnapshot = defineProvider('Runtime.HeapSnapshot', {
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
  onEnable: (ctx) => {
    if (isMainThread && !isServiceThread) takeSnapshot(ctx);
  },
});

const E = runtimeHeapSnapshot;

function end(snapshot: number, ctx: EnableContext, t: ParseTotals, started: number, error: string): void {
  if (E.SnapshotEnd.enabled) {
    E.SnapshotEnd.write(snapshot, ctx.sessionId, t.nodes, t.edges, t.locations, t.strings, t.stringBytes, t.skippedValues, elapsedMs(started, performance.now()), error);
  }
}

/**
 * Takes the snapshot on this thread (snapshot-stream.ts): each chunk V8 serializes is transcoded and
 * written (parking in a Block session while the drain catches up) before the next exists.
 */
function takeSnapshot(ctx: EnableContext): void {
  const snapshot = ++lastSnapshot;
  const started = performance.now();
  if (taking) {
    return end(snapshot, ctx, NO_TOTALS, started, 'another heap snapshot is being taken in this process');
  }
  if (snapshotAddonMissing && !warned) {
    warned = true;
    process.emitWarning(`tracepipe: Runtime.HeapSnapshot takes its snapshots through the inspector, without its native addon (${snapshotAddonMissing}): the process pauses longer (docs/GCDUMP.md)`);
  }
  taking = true;
  const out: SnapshotOutput = {
    header: (h, json) => E.SnapshotBegin.write(snapshot, ctx.sessionId, h.node_count, h.edge_count, json),
    nodes: (first, count, values) => E.Nodes.write(snapshot, first, count, values),
    edges: (first, count, values) => E.Edges.write(snapshot, first, count, values),
    locations: (first, count, values) => E.Locations.write(snapshot, first, count, values),
    strings: (first, count, values) => E.Strings.write(snapshot, first, count, values),
  };
  // Once no session listens (the tool went away), the rest is not read.
  streamHeapSnapshot(out, () => E.Nodes.enabled, (error, totals) => {
    taking = false;
    end(snapshot, ctx, totals, started, error);
  });
}
