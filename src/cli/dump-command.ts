import { parseArgs } from 'node:util';
import { readTrace } from '../format/trace-reader.js';
import type { TraceEvent } from '../format/trace-event.js';
import { CliError } from './cli-error.js';
import { formatOffset } from './format-time.js';
import { stringify } from './json-value.js';
import { writeOut } from './output.js';

export const dumpUsage = 'tracepipe dump FILE [--format text|jsonl]   one event per line, in timestamp order';

/** As in JSON (stringify), but numbers and booleans without a round trip through it: dump prints millions. */
function textValue(v: TraceEvent['fields'][string]): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return typeof v === 'string' ? JSON.stringify(v) : stringify(v);
}

function textLine(e: TraceEvent): string {
  let fields = '';
  for (const k of Object.keys(e.fields)) fields += `${fields ? ' ' : ''}${k}=${textValue(e.fields[k]!)}`;
  return `${formatOffset(e.timestampNs)}  T${String(e.threadId).padEnd(4)} #${String(e.sequence).padEnd(8)} ${e.provider}/${e.name}  ${fields}\n`;
}

export async function dumpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { format: { type: 'string', default: 'text' } } });
  if (positionals.length !== 1) throw new CliError(`usage: ${dumpUsage}`);
  const format = values.format;
  if (format !== 'text' && format !== 'jsonl') throw new CliError(`--format must be text or jsonl, not '${format}'`);
  let batch = '';
  try {
    for await (const e of readTrace(positionals[0]!)) {
      batch += format === 'jsonl' ? `${stringify(e)}\n` : textLine(e);
      if (batch.length > 64 * 1024) {
        await writeOut(batch);
        batch = '';
      }
    }
  } finally {
    // A damaged file: its intact events are printed before the error.
    await writeOut(batch);
  }
  return 0;
}
