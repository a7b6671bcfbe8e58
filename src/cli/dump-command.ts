import { parseArgs } from 'node:util';
import { ExportOutput, FLUSH_BYTES } from '../export/export-output.js';
import { readTrace } from '../format/trace-reader.js';
import { CliError } from './cli-error.js';
import { DumpText } from './dump-text.js';
import './output.js'; // a closed pipe (`| head`) ends quietly

export const dumpUsage = 'tracepipe dump FILE [--format text|jsonl]   one event per line, in timestamp order';

export async function dumpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { format: { type: 'string', default: 'text' } } });
  if (positionals.length !== 1) throw new CliError(`usage: ${dumpUsage}`);
  const format = values.format;
  if (format !== 'text' && format !== 'jsonl') throw new CliError(`--format must be text or jsonl, not '${format}'`);
  const out = await ExportOutput.create('-');
  // Lines go into one reused buffer and out in large writes: no string per line is kept.
  const w = new DumpText(FLUSH_BYTES + (64 << 10));
  try {
    for await (const e of readTrace(positionals[0]!)) {
      if (format === 'jsonl') w.jsonLine(e);
      else w.textLine(e);
      if (w.pos >= FLUSH_BYTES) {
        await out.write(w.buf.subarray(0, w.pos));
        w.pos = 0;
      }
    }
  } finally {
    // A damaged file: its intact events are printed before the error.
    await out.write(w.buf.subarray(0, w.pos));
    await out.close();
  }
  return 0;
}
