import type { Column, HeapGraph, SectionKind } from '../heap/heap-graph.js';
import { writeThroughTempFile } from '../sinks/private-file.js';

/** Text is written in pieces of about this many characters, never as one document-sized string. */
const PIECE = 1 << 20;

/**
 * Writes a heap graph as V8's .heapsnapshot JSON (what Chrome DevTools, memlab and other tools load),
 * field by field in the order its own meta lists them, with node references turned back into
 * offsets into the nodes array. Written to a temporary name and renamed, so a failure leaves no
 * partial file under the requested name. Returns the bytes written.
 */
export function writeHeapSnapshot(path: string, g: HeapGraph): number {
  const meta = g.snapshot.meta;
  const nodeWidth = meta.node_fields.length;
  return writeThroughTempFile(path, (write) => {
    let text = '';
    const flush = (): void => {
      write(Buffer.from(text));
      text = '';
    };
    const put = (piece: string): void => {
      text += piece;
      if (text.length >= PIECE) flush();
    };
    /** One numeric section: records of `fields`, the node-reference field scaled back to an offset. */
    const numbers = (kind: SectionKind, fields: readonly string[], count: number, nodeRef: string): void => {
      const cols: Column[] = fields.map((f) => g.column(kind, f));
      const scale = fields.map((f) => (f === nodeRef ? nodeWidth : 1));
      for (let i = 0; i < count; i++) {
        let rec = i === 0 ? '' : ',';
        for (let k = 0; k < cols.length; k++) rec += (k === 0 ? '' : ',') + cols[k]![i]! * scale[k]!;
        put(`${rec}\n`);
      }
    };
    put(`{"snapshot":${JSON.stringify(g.snapshot)},\n"nodes":[`);
    numbers('nodes', meta.node_fields, g.nodeCount, '');
    put('],\n"edges":[');
    numbers('edges', meta.edge_fields, g.edgeCount, 'to_node');
    // Allocation tracking is not carried (its numbers are counted as skipped when a target had it on).
    put('],\n"trace_function_infos":[],\n"trace_tree":[],\n"samples":[],\n"locations":[');
    numbers('locations', meta.location_fields ?? ['object_index'], g.locationCount, 'object_index');
    put('],\n"strings":[');
    for (let i = 0; i < g.stringCount; i++) put(`${i === 0 ? '' : ','}${JSON.stringify(g.string(i))}\n`);
    put(']}\n');
    flush();
  });
}
