import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from '../../export/heapsnapshot-writer.js';
import { readGcdump } from '../../heap/gcdump-file.js';
import { CliError } from '../cli-error.js';
import { formatBytes } from '../format-size.js';
import { writeOut } from '../output.js';
import { digits } from './type-table.js';

export const convertHelp = `usage: tracepipe gcdump convert FILE -o OUT.heapsnapshot

Writes a .gcdump as V8's .heapsnapshot JSON, which Chrome DevTools (Memory tab, Load) and memlab load.
`;

export async function gcdumpConvert(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    await writeOut(convertHelp);
    return 0;
  }
  if (positionals.length !== 1 || values.output === undefined) throw new CliError('usage: tracepipe gcdump convert FILE -o OUT.heapsnapshot');
  const g = readGcdump(positionals[0]!);
  let bytes: number;
  try {
    bytes = writeHeapSnapshot(values.output, g);
  } catch (e) {
    throw new CliError(`cannot write ${values.output}: ${(e as Error).message}`, 1);
  }
  await writeOut(`wrote ${values.output}: ${digits(g.nodeCount)} nodes, ${digits(g.edgeCount)} edges, ${formatBytes(bytes)}\n`);
  return 0;
}
