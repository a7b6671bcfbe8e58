import { readGcdump } from '../../heap/gcdump-file.js';
import type { HeapGraph } from '../../heap/heap-graph.js';
import { NodeLabels } from '../../heap/node-label.js';
import { sortedIds, threeSnapshotLeaks } from '../../heap/three-snapshot-leaks.js';
import { CliError } from '../cli-error.js';
import { defineCommand, JSON_OPTION } from '../command/command-spec.js';
import { stringify } from '../json-value.js';
import { writeOut } from '../output.js';
import { printable } from '../printable.js';
import { PATH_COLUMNS, pathLine, pathSteps } from './paths-command.js';
import { digits, parseTop } from './type-table.js';

const MIN_COUNT = 20;

const ID_COLUMNS = { nodes: ['id'] } as const;

/** Three dumps of one process, in order: the same pid, command line and Node.js, taken one after another. */
function checkSeries(files: readonly string[], dumps: readonly HeapGraph[]): void {
  const [a] = dumps;
  const who = (g: HeapGraph): string => `process ${g.origin.pid} (${printable(g.origin.argv.join(' '))})`;
  for (let i = 1; i < dumps.length; i++) {
    const b = dumps[i]!;
    if (b.origin.pid !== a!.origin.pid || b.origin.argv.join('\0') !== a!.origin.argv.join('\0') || b.origin.nodeVersion !== a!.origin.nodeVersion) {
      throw new CliError(`${files[0]} and ${files[i]} are dumps of different processes (${who(a!)}, ${who(b)}): object ids match only within one process`, 1);
    }
    if (b.origin.takenAtMs < dumps[i - 1]!.origin.takenAtMs) throw new CliError(`${files[i]} was taken before ${files[i - 1]}: give BASELINE TARGET FINAL in the order they were taken`, 1);
  }
}

export const gcdumpLeaksCommand = defineCommand({
  name: 'gcdump leaks',
  summary: 'objects allocated between two dumps and still alive in a third, grouped by type and retainer path',
  description:
    "memlab's three-snapshot method on three dumps of one process, in the order they were taken (gcdump collect --every 30s\n" +
    '--count 3 -o leak-{n}.gcdump takes them): the objects allocated between BASELINE and TARGET that are still alive in FINAL,\n' +
    'grouped by type and retainer path, the groups that retain most first. A group of fewer than --min-count objects is\n' +
    'counted, not shown: one-time allocations (a module loaded, code compiled, a cache filled once) look like that, leaks grow.',
  positionals: [
    { name: 'BASELINE', description: 'the first dump (.gcdump)' },
    { name: 'TARGET', description: 'the second dump, after the suspected leak happened' },
    { name: 'FINAL', description: 'the third dump, later still' },
  ],
  options: {
    top: { type: 'string', value: 'N', default: '10', description: 'groups shown' },
    'min-count': { type: 'string', value: 'K', default: String(MIN_COUNT), description: 'the fewest objects a group needs to be shown' },
    ...JSON_OPTION,
  },
  examples: [
    { args: ['leak-1.gcdump', 'leak-2.gcdump', 'leak-3.gcdump'], does: 'what was allocated between the first two dumps and is still alive in the third' },
    { args: ['leak-1.gcdump', 'leak-2.gcdump', 'leak-3.gcdump', '--min-count', '1', '--json'], does: 'every group, however small, as JSON' },
  ],
  run: ({ values, positionals }) => gcdumpLeaks(positionals as [string, string, string], values),
});

async function gcdumpLeaks(positionals: readonly [string, string, string], values: { top: string; 'min-count': string; json: boolean }): Promise<number> {
  const n = parseTop(values.top);
  const minCount = parseTop(values['min-count'], '--min-count');
  const [baselineFile, targetFile, finalFile] = positionals;
  const baseline = readGcdump(baselineFile, ID_COLUMNS);
  const target = readGcdump(targetFile, ID_COLUMNS);
  const final = readGcdump(finalFile, PATH_COLUMNS);
  checkSeries(positionals, [baseline, target, final]);
  const leaks = threeSnapshotLeaks(sortedIds(baseline), sortedIds(target), final, minCount);
  const labels = new NodeLabels(final);
  const to = final.column('edges', 'to_node');
  const shown = leaks.groups.slice(0, n).map((g) => ({ ...g, example: { id: g.example.id, path: pathSteps(labels, to, g.example.edges) } }));
  if (values.json) {
    await writeOut(`${stringify({ baseline: baselineFile, target: targetFile, final: finalFile, pid: final.origin.pid, objects: leaks.objects, selfBytes: leaks.selfBytes, minCount, groupCount: leaks.groups.length, small: leaks.small, groups: shown }, 2)}\n`);
    return 0;
  }
  const head = `process ${final.origin.pid} (${printable(final.origin.argv.join(' '))})`;
  const small = leaks.small.objects > 0 ? `; ${digits(leaks.small.objects)} objects in ${digits(leaks.small.groups)} groups of fewer than ${digits(minCount)} not counted (one-time allocations; --min-count 1 shows them)` : '';
  if (leaks.groups.length === 0) {
    await writeOut(`${head}: no leak: no group of ${digits(minCount)} or more objects allocated between ${baselineFile} and ${targetFile} is alive in ${finalFile}${small}\n`);
    return 0;
  }
  const lines = [
    `${head}: ${digits(leaks.objects)} objects (${digits(leaks.selfBytes)} bytes) allocated between ${baselineFile} and ${targetFile} are alive in ${finalFile}: ${digits(leaks.groups.length)} groups of ${digits(minCount)} or more${small}`,
    '',
    `top ${shown.length} groups by retained size`,
  ];
  for (const g of shown) {
    lines.push(`  ${printable(g.type)}: ${digits(g.count)} objects, ${digits(g.selfBytes)} bytes self, ${digits(g.retainedBytes)} retained`);
    lines.push(`    path: ${printable(g.path)}`);
    lines.push(`    e.g.: ${pathLine(g.example.path)}`);
  }
  await writeOut(`${lines.join('\n')}\n`);
  return 0;
}
