import type { ScratchBuffers } from './scratch-buffers.js';
import type { SnapshotHeader } from '../providers/heap-snapshot/snapshot-json-parser.js';

/**
 * A heap snapshot as columns: one typed array per V8 field (named by V8's own field lists), never an
 * object per node. Edges are in V8's order (each node's `edge_count` edges, node by node) and their
 * `to_node` is a node index; strings are one UTF-8 blob with offsets.
 */
export type Column = Uint8Array | Uint32Array | Float64Array;

/** V8's `snapshot` object, as the target sent it. */
export type SnapshotMeta = SnapshotHeader;

/** Where and when a snapshot was taken. */
export interface SnapshotOrigin {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly nodeVersion: string;
  /** ms since the epoch, when the snapshot began. */
  readonly takenAtMs: number;
  /** How long the target took to produce and stream it. */
  readonly durationMs: number;
  /** Numbers of allocation-tracking sections the target did not carry. */
  readonly skippedValues: number;
}

export type SectionKind = 'nodes' | 'edges' | 'locations';

const utf8 = new TextDecoder();

export class HeapGraph {
  constructor(
    readonly snapshot: SnapshotMeta,
    readonly origin: SnapshotOrigin,
    readonly nodeCount: number,
    readonly edgeCount: number,
    readonly locationCount: number,
    /** Per section, per field name: its column (only those loaded). */
    readonly columns: Readonly<Record<SectionKind, ReadonlyMap<string, Column>>>,
    /** UTF-8 of every string, back to back; string i is bytes stringOffsets[i] .. stringOffsets[i+1]. */
    readonly stringBytes: Uint8Array,
    readonly stringOffsets: Uint32Array | Float64Array,
  ) {}

  get stringCount(): number {
    return this.stringOffsets.length - 1;
  }

  /** A loaded column; a clear error when the snapshot has no such field. */
  column(kind: SectionKind, field: string): Column {
    const c = this.columns[kind].get(field);
    if (!c) throw new Error(`this heap snapshot has no ${kind} field '${field}'`);
    return c;
  }

  string(id: number): string {
    if (!(id >= 0 && id < this.stringCount)) return `<string ${id}?>`;
    return utf8.decode(this.stringBytes.subarray(this.stringOffsets[id]!, this.stringOffsets[id + 1]!));
  }

  /** V8's type names for a node or edge field of type list (e.g. node 'type': ['hidden', 'array', ...]). */
  typeNames(kind: 'nodes' | 'edges', field = 'type'): readonly string[] {
    const fields = kind === 'nodes' ? this.snapshot.meta.node_fields : this.snapshot.meta.edge_fields;
    const types = kind === 'nodes' ? this.snapshot.meta.node_types : this.snapshot.meta.edge_types;
    const t = types[fields.indexOf(field)];
    return Array.isArray(t) ? (t as string[]) : [];
  }

  /** Index of each node's first edge (prefix sums of edge_count): node i's edges are first[i] .. first[i+1]. */
  firstEdges(scratch?: ScratchBuffers): Uint32Array {
    const counts = this.column('nodes', 'edge_count');
    const first = scratch ? scratch.uint32(this.nodeCount + 1) : new Uint32Array(this.nodeCount + 1);
    let e = 0;
    for (let i = 0; i < this.nodeCount; i++) {
      first[i] = e;
      e += counts[i]!;
    }
    first[this.nodeCount] = e;
    return first;
  }
}
