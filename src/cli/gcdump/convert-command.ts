import { writeHeapSnapshot } from '../../export/heapsnapshot-writer.js';
import { readGcdump } from '../../heap/gcdump-file.js';
import { CliError } from '../cli-error.js';
import { defineCommand, QUIET_OPTION } from '../command/command-spec.js';
import { formatBytes } from '../format-size.js';
import { writeOut } from '../output.js';
import { ProgressLine } from '../progress-line.js';
import { digits } from './type-table.js';

export const gcdumpConvertCommand = defineCommand({
  name: 'gcdump convert',
  summary: "write a .gcdump as V8's .heapsnapshot JSON (Chrome DevTools, memlab)",
  description: "Writes a .gcdump as V8's .heapsnapshot JSON, which Chrome DevTools (Memory tab, Load) and memlab load.",
  positionals: [{ name: 'FILE', description: 'the dump (.gcdump)' }],
  options: {
    output: { type: 'string', short: 'o', value: 'OUT.heapsnapshot', required: true, description: 'where to write the snapshot' },
    ...QUIET_OPTION,
  },
  examples: [{ args: ['app.gcdump', '-o', 'app.heapsnapshot'], does: 'for the Memory tab of Chrome DevTools' }],
  run: ({ values, positionals }) => gcdumpConvert(positionals[0]!, values.output, values.quiet),
});

async function gcdumpConvert(file: string, output: string, quiet: boolean): Promise<number> {
  // Both steps are synchronous: the line shows which one is running.
  const progress = new ProgressLine(`reading ${file}`, { quiet });
  let g;
  let bytes: number;
  try {
    g = readGcdump(file);
    progress.update({ doing: `writing ${output} (${digits(g.nodeCount)} nodes, ${digits(g.edgeCount)} edges)` });
    try {
      bytes = writeHeapSnapshot(output, g);
    } catch (e) {
      throw new CliError(`cannot write ${output}: ${(e as Error).message}`, 1);
    }
  } finally {
    progress.stop();
  }
  await writeOut(`wrote ${output}: ${digits(g.nodeCount)} nodes, ${digits(g.edgeCount)} edges, ${formatBytes(bytes)}\n`);
  return 0;
}
