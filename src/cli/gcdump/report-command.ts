import { readGcdump, readNodeField } from '../../heap/gcdump-file.js';
import type { HeapGraph } from '../../heap/heap-graph.js';
import { STATISTICS_COLUMNS, type TypeRow, type TypeStatistics, typeStatistics } from '../../heap/type-statistics.js';
import { defineCommand, JSON_OPTION, QUIET_OPTION } from '../command/command-spec.js';
import { stringify } from '../json-value.js';
import { writeOut } from '../output.js';
import { printable } from '../printable.js';
import { ProgressLine } from '../progress-line.js';
import { digits, parseTop, typeTable } from './type-table.js';

const percent = (part: number, whole: number): string => `${whole > 0 ? Math.round((100 * part) / whole) : 0} %`;

/** Where a type's retained size is held: one object when it holds most of it, else the kind of object that does. */
function holderLine(r: TypeRow): string {
  const h = r.heldBy;
  if (!h) return 'not held by any one object (the root\'s own)';
  if (2 * h.bytes >= r.retainedBytes) return `${percent(h.bytes, r.retainedBytes)} held by ${printable(h.name)}`;
  return `spread over many objects: ${percent(h.byType.bytes, r.retainedBytes)} under ${printable(h.byType.name)} objects; the largest share, ${percent(h.bytes, r.retainedBytes)}, under ${printable(h.name)}`;
}

type Key = 'count' | 'selfBytes' | 'retainedBytes';

function top(types: readonly TypeRow[], key: Key, n: number): TypeRow[] {
  return [...types].sort((a, b) => b[key] - a[key] || a.name.localeCompare(b.name)).slice(0, n);
}

export const gcdumpReportCommand = defineCommand({
  name: 'gcdump report',
  summary: 'totals of a .gcdump and its top types by count, self size and retained size',
  description:
    'Totals of a .gcdump (nodes, edges, bytes) and its top types (constructor or class name) by count, by self size and by\n' +
    'retained size (from the dominator tree), and for each type of the last table the object (its immediate dominator) that\n' +
    'holds most of its retained size.',
  positionals: [{ name: 'FILE', description: 'the dump (.gcdump)' }],
  options: {
    top: { type: 'string', value: 'N', default: '10', description: 'rows per table' },
    ...JSON_OPTION,
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.gcdump'], does: 'what fills the heap, by type' },
    { args: ['app.gcdump', '--top', '30', '--json'], does: '30 rows per table, as JSON' },
  ],
  run: ({ values, positionals }) => gcdumpReport(positionals[0]!, values),
});

async function gcdumpReport(file: string, values: { top: string; json: boolean; quiet: boolean }): Promise<number> {
  const n = parseTop(values.top);
  // Both steps are synchronous: the line shows which one is running.
  const progress = new ProgressLine(`reading ${file}`, { quiet: values.quiet });
  let g: HeapGraph;
  let stats: TypeStatistics;
  try {
    g = readGcdump(file, STATISTICS_COLUMNS);
    progress.update({ doing: `computing retained sizes (dominators of ${digits(g.nodeCount)} nodes)` });
    stats = typeStatistics(g, n, (nodes) => readNodeField(file, 'id', nodes));
  } finally {
    progress.stop();
  }
  const byCount = top(stats.types, 'count', n);
  const bySelf = top(stats.types, 'selfBytes', n);
  const byRetained = top(stats.types, 'retainedBytes', n);
  if (values.json) {
    const { types: _all, ...totals } = stats;
    await writeOut(`${stringify({ file, origin: g.origin, ...totals, types: stats.types.length, byCount, bySelfSize: bySelf, byRetainedSize: byRetained }, 2)}\n`);
    return 0;
  }
  const o = g.origin;
  const lines = [
    `heap snapshot of process ${o.pid} (${printable(o.argv.join(' '))}), ${printable(o.nodeVersion)}, taken ${new Date(o.takenAtMs).toISOString()}`,
    `  ${digits(stats.nodes)} nodes, ${digits(stats.edges)} edges, ${digits(stats.selfBytes)} bytes (self sizes), ${digits(stats.types.length)} types, ${digits(stats.unreachable)} nodes unreachable from the root`,
    '',
    `top ${byCount.length} types by count`,
    ...typeTable(byCount),
    '',
    `top ${bySelf.length} types by self size`,
    ...typeTable(bySelf),
    '',
    `top ${byRetained.length} types by retained size`,
    ...typeTable(byRetained),
    '',
    'where they are held (the dominator holding most of each type\'s retained size; `gcdump paths --id` shows why it is alive)',
    ...byRetained.map((r) => `  ${printable(r.name)}: ${holderLine(r)}`),
  ];
  await writeOut(`${lines.join('\n')}\n`);
  return 0;
}
