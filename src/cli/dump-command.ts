import { ExportOutput, FLUSH_BYTES } from '../export/export-output.js';
import { readTrace } from '../format/trace-reader.js';
import { defineCommand, QUIET_OPTION } from './command/command-spec.js';
import { CliError } from './cli-error.js';
import { DumpText } from './dump-text.js';
import { ProgressLine } from './progress-line.js';
import './output.js'; // a closed pipe (`| head`) ends quietly

export const dumpCommand = defineCommand({
  name: 'dump',
  summary: 'one event per line, in timestamp order',
  description: 'Prints every event of a trace, one per line, in timestamp order: as text, or as JSON lines for jq and friends.',
  positionals: [{ name: 'FILE', description: 'the trace (.tptrace)' }],
  options: {
    format: { type: 'string', value: 'text|jsonl', default: 'text', description: 'text for people, jsonl (one JSON object per line) for tools' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.tptrace'], does: 'every event as a line of text' },
    { args: ['app.tptrace', '--format', 'jsonl'], does: 'every event as a JSON object, one per line' },
  ],
  async run({ values, positionals }) {
    const format = values.format;
    if (format !== 'text' && format !== 'jsonl') throw new CliError(`--format must be text or jsonl, not '${format}'`);
    const out = await ExportOutput.create('-');
    // The lines are the progress when they go to the same terminal.
    const progress = new ProgressLine('dumping', { quiet: values.quiet || process.stdout.isTTY === true }).followTraceReads();
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
      progress.stop();
      // A damaged file: its intact events are printed before the error.
      await out.write(w.buf.subarray(0, w.pos));
      await out.close();
    }
    return 0;
  },
});
