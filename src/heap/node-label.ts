import type { HeapGraph } from './heap-graph.js';

const MAX_NAME = 60;

/** Reads a heap's node and edge names the way Chrome DevTools' Retainers panel and memlab show them. */
export class NodeLabels {
  private readonly nodeTypes: readonly string[];
  private readonly edgeTypes: readonly string[];
  private readonly type: ArrayLike<number>;
  private readonly name: ArrayLike<number>;

  constructor(private readonly g: HeapGraph) {
    this.nodeTypes = g.typeNames('nodes');
    this.edgeTypes = g.typeNames('edges');
    this.type = g.column('nodes', 'type');
    this.name = g.column('nodes', 'name');
  }

  // `gcdump report` reads the ids it prints from the file, without the column; edge columns are
  // loaded only by the commands that print edges.
  private get id(): ArrayLike<number> {
    return this.g.column('nodes', 'id');
  }
  private get edgeType(): ArrayLike<number> {
    return this.g.column('edges', 'type');
  }
  private get edgeName(): ArrayLike<number> {
    return this.g.column('edges', 'name_or_index');
  }

  nodeType(v: number): string {
    return this.nodeTypes[this.type[v]!] ?? `type ${this.type[v]!}`;
  }

  /** V8's stable object id (DevTools' @ number). */
  nodeId(v: number): number {
    return this.id[v]!;
  }

  /** `node(v)` and its V8 id: `Map @123`. */
  node(v: number, id = this.nodeId(v)): string {
    return `${this.what(v)} @${id}`;
  }

  /** An object by its class (`Map`), anything else by its name and kind (`system / Context (hidden)`, `(array)`). */
  what(v: number): string {
    const type = this.nodeType(v);
    let name = this.g.string(this.name[v]!);
    if (name.length > MAX_NAME) name = `${name.slice(0, MAX_NAME)}…`;
    if (type === 'synthetic' && !name) return '(root)';
    const what = type === 'object' || type === 'native' ? name : type === 'string' ? `${JSON.stringify(name)} (string)` : name ? `${name} (${type})` : `(${type})`;
    return what;
  }

  edgeKind(e: number): string {
    return this.edgeTypes[this.edgeType[e]!] ?? `type ${this.edgeType[e]!}`;
  }

  /** `cache (property)`, `[17] (element)`: elements and hidden edges are numbered, the others named. */
  edge(e: number): string {
    const kind = this.edgeKind(e);
    const n = this.edgeName[e]!;
    return kind === 'element' || kind === 'hidden' ? `[${n}] (${kind})` : `${this.g.string(n)} (${kind})`;
  }

  /** The same without indexes (`[] (element)`, and V8's numbered internal slots): the edges of many objects in one container read alike. */
  edgeShape(e: number): string {
    const kind = this.edgeKind(e);
    if (kind === 'element' || kind === 'hidden') return `[] (${kind})`;
    const name = this.g.string(this.edgeName[e]!);
    return /^\d+$/.test(name) ? `[] (${kind})` : `${name} (${kind})`;
  }
}
