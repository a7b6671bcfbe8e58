import type { TraceEvent } from '../format/trace-event.js';
import { readVarints } from '../providers/heap-snapshot/bulk-codec.js';
import { isFieldList, type ParseTotals } from '../providers/heap-snapshot/snapshot-json-parser.js';
import { type Column, HeapGraph, type SectionKind, type SnapshotMeta, type SnapshotOrigin } from './heap-graph.js';

const PROVIDER = 'Runtime.HeapSnapshot';
const U32_MAX = 0xffffffff;

/** The stream cannot give a faithful graph: no dump may be written. The message is one line. */
export class SnapshotStreamError extends Error {
  override readonly name = 'SnapshotStreamError';
}

interface Section {
  readonly kind: SectionKind;
  readonly fields: readonly string[];
  columns: Column[];
  /** Records received; the next bulk event must start here. */
  count: number;
  /** Declared (nodes, edges) or unknown (locations: grows). */
  readonly declared: number | undefined;
  /** Index of the field that holds a node index, checked to be below the node count. */
  readonly nodeRef: number;
}

/** What the target says it wrote (its SnapshotEnd event). */
interface EndTotals extends ParseTotals {
  readonly durationMs: number;
}

/** Columns start as bytes (types, flags and small counts stay so) and widen when a value needs it. */
function section(kind: SectionKind, fields: readonly string[], declared: number | undefined, nodeRefField: string): Section {
  const size = declared ?? 1024;
  return { kind, fields, columns: fields.map(() => new Uint8Array(size)), count: 0, declared, nodeRef: fields.indexOf(nodeRefField) };
}

function limitOf(c: Column): number {
  return c instanceof Uint8Array ? 255 : c instanceof Uint32Array ? U32_MAX : Infinity;
}

function widen(c: Column, v: number): Column {
  return v > U32_MAX ? new Float64Array(c) : new Uint32Array(c);
}

function grow(c: Column, size: number): Column {
  const next = new (c.constructor as new (n: number) => Column)(size);
  next.set(c as never);
  return next;
}

/**
 * Rebuilds one snapshot from Runtime.HeapSnapshot events into columns sized from V8's declared
 * counts, checking as it goes that nothing is missing, repeated or out of place: bulk events must
 * arrive in order, each exactly where the previous one ended, and at the end every count must equal
 * both V8's declaration and what the target says it wrote.
 */
export class HeapGraphBuilder {
  phase: 'waiting' | 'nodes' | 'edges' | 'locations' | 'strings' | 'done' = 'waiting';
  private snapshotNo = -1;
  private meta: SnapshotMeta | undefined;
  private nodes: Section | undefined;
  private edges: Section | undefined;
  private locations: Section | undefined;
  private strings = new Uint8Array(64 * 1024);
  stringBytes = 0;
  private endTotals: EndTotals | undefined;
  private takenAtMs = 0;
  private scratch = new Float64Array(4096);

  constructor(
    private readonly sessionId: number,
    private readonly origin: Pick<SnapshotOrigin, 'pid' | 'argv' | 'nodeVersion'>,
  ) {}

  get nodeCount(): number {
    return this.nodes?.count ?? 0;
  }
  get edgeCount(): number {
    return this.edges?.count ?? 0;
  }
  get declaredNodes(): number {
    return this.meta?.node_count ?? 0;
  }
  get declaredEdges(): number {
    return this.meta?.edge_count ?? 0;
  }
  get ended(): boolean {
    return this.endTotals !== undefined;
  }

  event(e: TraceEvent): void {
    if (e.provider !== PROVIDER) return;
    const f = e.fields;
    if (e.name === 'SnapshotBegin') {
      if (f.session === this.sessionId && this.snapshotNo < 0) this.begin(f.snapshot as number, f.meta as string, f.nodeCount as number, f.edgeCount as number);
      return;
    }
    if (e.name === 'SnapshotEnd' && f.session === this.sessionId && this.snapshotNo < 0) {
      throw new SnapshotStreamError(`the target could not take the heap snapshot: ${(f.error as string) || 'it ended before it began'}`);
    }
    if (f.snapshot !== this.snapshotNo || this.snapshotNo < 0) return;
    switch (e.name) {
      case 'Nodes':
        return this.bulk(this.nodes!, f.first as number, f.count as number, f.values as Uint8Array);
      case 'Edges':
        return this.bulk(this.edges!, f.first as number, f.count as number, f.values as Uint8Array);
      case 'Locations':
        return this.bulk(this.locations!, f.first as number, f.count as number, f.values as Uint8Array);
      case 'Strings':
        if (f.count !== (f.values as Uint8Array).length) throw new SnapshotStreamError(`a strings event at byte ${f.first as number} is damaged`);
        return this.stringsBulk(f.first as number, f.values as Uint8Array);
      case 'SnapshotEnd':
        if (f.error) throw new SnapshotStreamError(`the target could not finish the heap snapshot: ${f.error as string}`);
        this.endTotals = {
          nodes: f.nodes as number,
          edges: f.edges as number,
          locations: f.locations as number,
          strings: f.strings as number,
          stringBytes: f.stringBytes as number,
          skippedValues: f.skippedValues as number,
          durationMs: f.durationMs as number,
        };
        this.phase = 'done';
    }
  }

  private begin(snapshot: number, json: string, nodeCount: number, edgeCount: number): void {
    let meta: SnapshotMeta;
    try {
      meta = JSON.parse(json) as SnapshotMeta;
    } catch {
      throw new SnapshotStreamError('the snapshot header is not valid JSON');
    }
    const m = meta?.meta;
    if (!m || !isFieldList(m.node_fields) || !isFieldList(m.edge_fields)) throw new SnapshotStreamError('the snapshot header has no field lists');
    for (const [fields, need] of [
      [m.node_fields, ['type', 'name', 'self_size', 'edge_count']],
      [m.edge_fields, ['type', 'name_or_index', 'to_node']],
    ] as const) {
      const missing = need.filter((x) => !fields.includes(x));
      if (missing.length) throw new SnapshotStreamError(`the snapshot's field lists lack ${missing.join(', ')}`);
    }
    if (meta.node_count !== nodeCount || meta.edge_count !== edgeCount) throw new SnapshotStreamError('the begin event and the snapshot header disagree on the counts');
    if (!(nodeCount >= 1 && nodeCount < 2 ** 31 && edgeCount >= 0 && edgeCount < 2 ** 31)) throw new SnapshotStreamError(`implausible counts: ${nodeCount} nodes, ${edgeCount} edges`);
    this.snapshotNo = snapshot;
    this.meta = meta;
    this.takenAtMs = Date.now();
    this.nodes = section('nodes', m.node_fields, nodeCount, '');
    this.edges = section('edges', m.edge_fields, edgeCount, 'to_node');
    this.locations = section('locations', isFieldList(m.location_fields) ? m.location_fields : ['object_index'], undefined, 'object_index');
    this.phase = 'nodes';
  }

  private bulk(s: Section, first: number, count: number, values: Uint8Array): void {
    this.phase = s.kind;
    if (first !== s.count) throw new SnapshotStreamError(`${s.kind} ${first}.. arrived where ${s.count} was due: the stream is damaged`);
    const w = s.fields.length;
    const n = count * w;
    if (s.declared !== undefined && first + count > s.declared) throw new SnapshotStreamError(`more ${s.kind} than the ${s.declared} V8 declared`);
    if (this.scratch.length < n) this.scratch = new Float64Array(n);
    if (!readVarints(values, this.scratch, n)) throw new SnapshotStreamError(`a bulk event of ${s.kind} ${first}.. is damaged`);
    if (s.declared === undefined && first + count > s.columns[0]!.length) {
      const size = Math.max(first + count, s.columns[0]!.length * 2);
      s.columns = s.columns.map((c) => grow(c, size));
    }
    const scratch = this.scratch;
    const nodeLimit = this.meta!.node_count;
    for (let k = 0; k < w; k++) {
      let col = s.columns[k]!;
      let limit = limitOf(col);
      const ref = k === s.nodeRef;
      for (let r = 0, i = k; r < count; r++, i += w) {
        const v = scratch[i]!;
        if (v > limit) {
          col = s.columns[k] = widen(col, v);
          limit = limitOf(col);
        }
        if (ref && v >= nodeLimit) throw new SnapshotStreamError(`${s.kind} record ${first + r} points at node ${v}, past the ${nodeLimit} nodes`);
        col[first + r] = v;
      }
    }
    s.count += count;
  }

  private stringsBulk(first: number, values: Uint8Array): void {
    this.phase = 'strings';
    if (first !== this.stringBytes) throw new SnapshotStreamError(`string bytes ${first}.. arrived where ${this.stringBytes} was due: the stream is damaged`);
    if (this.stringBytes + values.length > this.strings.length) {
      const next = new Uint8Array(Math.max(this.stringBytes + values.length, this.strings.length * 2));
      next.set(this.strings.subarray(0, this.stringBytes));
      this.strings = next;
    }
    this.strings.set(values, this.stringBytes);
    this.stringBytes += values.length;
  }

  /** The graph, once the stream ended; throws SnapshotStreamError when anything is missing or wrong. */
  finish(): HeapGraph {
    const meta = this.meta;
    if (!meta) throw new SnapshotStreamError('the stream ended before the heap snapshot began');
    const t = this.endTotals;
    const nodes = this.nodes!;
    const edges = this.edges!;
    const locations = this.locations!;
    if (!t) throw new SnapshotStreamError(`the stream ended in the middle of the heap snapshot (${nodes.count.toLocaleString('en-US')} of ${meta.node_count.toLocaleString('en-US')} nodes, ${edges.count.toLocaleString('en-US')} of ${meta.edge_count.toLocaleString('en-US')} edges)`);
    if (nodes.count !== meta.node_count || t.nodes !== meta.node_count) throw new SnapshotStreamError(`node count ${nodes.count.toLocaleString('en-US')} differs from V8's declared ${meta.node_count.toLocaleString('en-US')}`);
    if (edges.count !== meta.edge_count || t.edges !== meta.edge_count) throw new SnapshotStreamError(`edge count ${edges.count.toLocaleString('en-US')} differs from V8's declared ${meta.edge_count.toLocaleString('en-US')}`);
    if (locations.count !== t.locations) throw new SnapshotStreamError(`${locations.count} locations arrived, the target wrote ${t.locations}`);
    if (this.stringBytes !== t.stringBytes) throw new SnapshotStreamError(`${this.stringBytes} string bytes arrived, the target wrote ${t.stringBytes}`);
    const edgeCounts = nodes.columns[nodes.fields.indexOf('edge_count')]!;
    let sum = 0;
    for (let i = 0; i < nodes.count; i++) sum += edgeCounts[i]!;
    if (sum !== edges.count) throw new SnapshotStreamError(`the nodes' edge counts add up to ${sum}, not the ${edges.count} edges`);
    const { bytes, offsets } = splitStrings(this.strings.subarray(0, this.stringBytes), t.strings);
    const trimmed = locations.columns.map((c) => c.subarray(0, locations.count) as Column);
    const byName = (s: Section, cols: Column[]) => new Map(s.fields.map((name, i) => [name, cols[i]!]));
    return new HeapGraph(
      meta,
      { ...this.origin, takenAtMs: this.takenAtMs, durationMs: t.durationMs, skippedValues: t.skippedValues },
      nodes.count,
      edges.count,
      locations.count,
      { nodes: byName(nodes, nodes.columns), edges: byName(edges, edges.columns), locations: byName(locations, trimmed) },
      bytes,
      offsets,
    );
  }
}

/** The strings stream (varint length, UTF-8; repeated) as one blob and offsets. */
function splitStrings(stream: Uint8Array, expected: number): { bytes: Uint8Array; offsets: Float64Array } {
  const offsets = new Float64Array(expected + 1);
  const bytes = new Uint8Array(stream.length);
  let p = 0;
  let out = 0;
  let i = 0;
  for (; p < stream.length; i++) {
    if (i >= expected) throw new SnapshotStreamError(`more strings arrived than the ${expected} the target wrote`);
    let len = 0;
    let mul = 1;
    for (;;) {
      if (p >= stream.length) throw new SnapshotStreamError('the strings stream is cut short');
      const b = stream[p++]!;
      len += (b & 127) * mul;
      if (b < 128) break;
      mul *= 128;
    }
    if (p + len > stream.length) throw new SnapshotStreamError('the strings stream is cut short');
    offsets[i] = out;
    bytes.set(stream.subarray(p, p + len), out);
    out += len;
    p += len;
  }
  if (i !== expected) throw new SnapshotStreamError(`${i} strings arrived, the target wrote ${expected}`);
  offsets[i] = out;
  return { bytes: bytes.subarray(0, out), offsets };
}
