import { isMainThread as onMainThread } from '../../schema/this-thread.js';
import { elapsedMs } from '../../schema/milliseconds.js';
import { attachCallbacks, type EnableContext } from '../../schema/provider.js';
import { isServiceThread } from '../../session/service-thread.js';
import { NO_TOTALS, type ParseTotals, type SnapshotOutput } from './snapshot-json-parser.js';
import { snapshotAddonMissing, streamHeapSnapshot } from './snapshot-stream.js';
import { runtimeHeapSnapshot } from '../definitions/heap-snapshot.js';
const isMainThread = onMainThread();

/** Snapshots taken by this process, numbered so a session can tell its own from another's. */
let lastSnapshot = 0;
let taking = false;
let warned = false;

// What runtimeHeapSnapshot does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/heap-snapshot.ts).
attachCallbacks(runtimeHeapSnapshot, { onEnable: (ctx) => {
    if (isMainThread && !isServiceThread) takeSnapshot(ctx);
  } });

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
