import { dominatorTree } from '../../heap/dominator-tree.js';
import { readGcdump } from '../../heap/gcdump-file.js';
import type { HeapGraph } from '../../heap/heap-graph.js';
import { NodeLabels } from '../../heap/node-label.js';
import { RetainerPaths } from '../../heap/retainer-paths.js';
import { classify, retainedSizes, retainingEdges } from '../../heap/type-statistics.js';
import { CliError, UsageError } from '../cli-error.js';
import { usageText } from '../command/command-help.js';
import { defineCommand, JSON_OPTION } from '../command/command-spec.js';
import { stringify } from '../json-value.js';
import { writeOut } from '../output.js';
import { printable } from '../printable.js';
import { digits, parseTop } from './type-table.js';

const PATHS_PER_OBJECT = 3;

export const PATH_COLUMNS = { nodes: ['type', 'name', 'id', 'self_size', 'edge_count'], edges: ['type', 'name_or_index', 'to_node'] } as const;

export interface PathStep {
  readonly edge: string;
  readonly node: string;
}

export interface RetainedObject {
  readonly id: number;
  readonly node: string;
  readonly selfBytes: number;
  readonly retainedBytes: number;
  readonly distance: number;
  /** Each path from the root: the edges taken and the node each reaches. */
  readonly paths: readonly (readonly PathStep[])[];
}

/** A path of edges as steps a person reads: `cache (property)` → `Map @45`. */
export function pathSteps(labels: NodeLabels, to: ArrayLike<number>, edges: readonly number[]): PathStep[] {
  return edges.map((e) => ({ edge: labels.edge(e), node: labels.node(to[e]!) }));
}

/** One line per path: `(GC roots) @3 → [12] (element) → Foo @45`, the root itself left out. */
export function pathLine(steps: readonly PathStep[]): string {
  return steps.map((s, i) => `${i === 0 ? '' : `${printable(s.edge)} → `}${printable(s.node)}`).join(' → ');
}

function findById(g: HeapGraph, id: number): number {
  const ids = g.column('nodes', 'id');
  for (let v = 0; v < g.nodeCount; v++) if (ids[v] === id) return v;
  return -1;
}

export const gcdumpPathsCommand = defineCommand({
  name: 'gcdump paths',
  summary: 'why objects are alive: their shortest retaining paths from the root',
  description:
    `For the objects of a type that retain the most, or for one object by its V8 id (DevTools' @N), the shortest retaining\n` +
    `paths from the root, edge by edge, one per immediate retainer (at most ${PATHS_PER_OBJECT}), weak edges excluded.`,
  positionals: [{ name: 'FILE', description: 'the dump (.gcdump)' }],
  options: {
    type: { type: 'string', value: 'NAME', description: 'the type (constructor or class name, as gcdump report names it)', defaultText: 'give --type or --id' },
    id: { type: 'string', value: 'N', description: 'one object, by its V8 id', defaultText: 'give --type or --id' },
    top: { type: 'string', value: 'N', default: '5', description: 'with --type: how many of its objects, those that retain the most first' },
    ...JSON_OPTION,
  },
  examples: [
    { args: ['app.gcdump', '--type', 'Session'], does: 'why the 5 biggest Session objects are alive' },
    { args: ['app.gcdump', '--id', '34519', '--json'], does: 'the paths to object @34519, as JSON' },
  ],
  run: ({ values, positionals }) => gcdumpPaths(positionals[0]!, values),
});

async function gcdumpPaths(file: string, values: { type: string | undefined; id: string | undefined; top: string; json: boolean }): Promise<number> {
  if ((values.type === undefined) === (values.id === undefined)) throw new UsageError('gcdump paths needs one of --type NAME or --id N', usageText(gcdumpPathsCommand));
  if (values.id !== undefined && !/^\d+$/.test(values.id)) throw new CliError(`--id must be a V8 object id (a whole number), not '${values.id}'`);
  const n = parseTop(values.top);
  const g = readGcdump(file, PATH_COLUMNS);
  const edges = retainingEdges(g);
  const tree = dominatorTree(g.nodeCount, 0, edges);
  const retained = retainedSizes(g, tree);
  let chosen: number[];
  if (values.id !== undefined) {
    const v = findById(g, Number(values.id));
    if (v < 0) throw new CliError(`${file} has no object with id ${values.id}`, 1);
    chosen = [v];
  } else {
    const { classOf, names } = classify(g);
    const c = names.indexOf(values.type!);
    if (c < 0) throw new CliError(`${file} has no objects of type '${printable(values.type!)}' (types are named as in gcdump report)`, 1);
    chosen = [];
    for (let v = 0; v < g.nodeCount; v++) if (classOf[v] === c) chosen.push(v);
    chosen.sort((a, b) => retained[b]! - retained[a]! || a - b);
    chosen = chosen.slice(0, n);
  }
  const paths = new RetainerPaths(g.nodeCount, 0, edges);
  const labels = new NodeLabels(g);
  const self = g.column('nodes', 'self_size');
  const to = g.column('edges', 'to_node');
  const objects: RetainedObject[] = chosen.map((v) => ({
    id: labels.nodeId(v),
    node: labels.node(v),
    selfBytes: self[v]!,
    retainedBytes: retained[v]!,
    distance: paths.distance[v]!,
    paths: paths.distinct(v, PATHS_PER_OBJECT).map((p) => pathSteps(labels, to, p)),
  }));
  if (values.json) {
    await writeOut(`${stringify({ file, ...(values.id !== undefined ? { id: Number(values.id) } : { type: values.type }), objects }, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  for (const o of objects) {
    lines.push(`${printable(o.node)}: retains ${digits(o.retainedBytes)} bytes (self ${digits(o.selfBytes)})`);
    if (o.paths.length === 0) lines.push('  unreachable from the root (only weak edges, or none, lead to it): the next GC frees it');
    else if (o.distance === 0) lines.push('  the root itself');
    for (const p of o.paths) if (p.length > 0) lines.push(`  ${pathLine(p)}`);
    lines.push('');
  }
  await writeOut(lines.join('\n'));
  return 0;
}
