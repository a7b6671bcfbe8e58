import { readGcdump } from '../../heap/gcdump-file.js';
import type { HeapGraph } from '../../heap/heap-graph.js';
import { typeTotals } from '../../heap/type-statistics.js';
import { defineCommand, JSON_OPTION, QUIET_OPTION } from '../command/command-spec.js';
import { stringify } from '../json-value.js';
import { writeOut } from '../output.js';
import { printable } from '../printable.js';
import { ProgressLine } from '../progress-line.js';
import { delta, digits, parseTop, table } from './type-table.js';

export interface TypeChange {
  readonly name: string;
  readonly countA: number;
  readonly countB: number;
  readonly countDelta: number;
  readonly selfBytesA: number;
  readonly selfBytesB: number;
  readonly selfBytesDelta: number;
}

function perType(g: HeapGraph): { total: number; types: Map<string, { count: number; self: number }> } {
  const t = typeTotals(g);
  return { total: t.total, types: new Map(t.names.map((n, i) => [n, { count: t.count[i]!, self: t.selfBytes[i]! }])) };
}

const COLUMNS = { nodes: ['type', 'name', 'self_size'] } as const;

export const gcdumpDiffCommand = defineCommand({
  name: 'gcdump diff',
  summary: 'how the count and self size of each type changed from dump A to dump B',
  description:
    'Per type (constructor or class name): how the count and the self size changed from dump A to dump B, growth first: the\n' +
    'types that grew most by count, then by size.',
  positionals: [
    { name: 'A', description: 'the earlier dump (.gcdump)' },
    { name: 'B', description: 'the later dump (.gcdump)' },
  ],
  options: {
    top: { type: 'string', value: 'N', default: '10', description: 'rows per table' },
    ...JSON_OPTION,
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['before.gcdump', 'after.gcdump'], does: 'the types that grew most between the two' },
    { args: ['before.gcdump', 'after.gcdump', '--top', '25', '--json'], does: '25 rows per table, as JSON' },
  ],
  run: ({ values, positionals }) => gcdumpDiff(positionals[0]!, positionals[1]!, values),
});

async function gcdumpDiff(fileA: string, fileB: string, values: { top: string; json: boolean; quiet: boolean }): Promise<number> {
  const n = parseTop(values.top);
  // Reading is synchronous: the line shows which dump is being read.
  const progress = new ProgressLine(`reading ${fileA}`, { quiet: values.quiet });
  let a: HeapGraph;
  let b: HeapGraph;
  try {
    a = readGcdump(fileA, COLUMNS);
    progress.update({ doing: `reading ${fileB}` });
    b = readGcdump(fileB, COLUMNS);
  } finally {
    progress.stop();
  }
  const { total: totalA, types: ta } = perType(a);
  const { total: totalB, types: tb } = perType(b);
  const changes: TypeChange[] = [...new Set([...ta.keys(), ...tb.keys()])].map((name) => {
    const x = ta.get(name) ?? { count: 0, self: 0 };
    const y = tb.get(name) ?? { count: 0, self: 0 };
    return { name, countA: x.count, countB: y.count, countDelta: y.count - x.count, selfBytesA: x.self, selfBytesB: y.self, selfBytesDelta: y.self - x.self };
  });
  const byCount = [...changes].sort((p, q) => q.countDelta - p.countDelta || q.selfBytesDelta - p.selfBytesDelta || p.name.localeCompare(q.name)).slice(0, n);
  const bySize = [...changes].sort((p, q) => q.selfBytesDelta - p.selfBytesDelta || q.countDelta - p.countDelta || p.name.localeCompare(q.name)).slice(0, n);
  const totals = { nodesA: a.nodeCount, nodesB: b.nodeCount, selfBytesA: totalA, selfBytesB: totalB };
  if (values.json) {
    await writeOut(`${stringify({ a: fileA, b: fileB, ...totals, byCountDelta: byCount, bySelfBytesDelta: bySize }, 2)}\n`);
    return 0;
  }
  const rows = (list: readonly TypeChange[]) =>
    table(
      ['count Δ', 'count A', 'count B', 'self bytes Δ', 'type'],
      list.map((c) => [delta(c.countDelta), digits(c.countA), digits(c.countB), delta(c.selfBytesDelta), printable(c.name)]),
    );
  const lines = [
    `A ${fileA}: ${digits(totals.nodesA)} nodes, ${digits(totals.selfBytesA)} bytes`,
    `B ${fileB}: ${digits(totals.nodesB)} nodes, ${digits(totals.selfBytesB)} bytes`,
    `  change: ${delta(totals.nodesB - totals.nodesA)} nodes, ${delta(totals.selfBytesB - totals.selfBytesA)} bytes`,
    '',
    `top ${byCount.length} types by count change (B - A)`,
    ...rows(byCount),
    '',
    `top ${bySize.length} types by self size change (B - A)`,
    ...rows(bySize),
  ];
  await writeOut(`${lines.join('\n')}\n`);
  return 0;
}
