import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { convertTrace, type ConvertResult } from '../../export/convert-trace.js';
import { CliError } from '../cli-error.js';
import { defineCommand, QUIET_OPTION } from '../command/command-spec.js';
import { countOf, formatRate } from '../format-count.js';
import { formatBytes } from '../format-size.js';
import { writeErr, writeOut } from '../output.js';
import { type ConvertJob, fromWire, type JobMessage } from './convert-job.js';
import { ProgressLine } from '../progress-line.js';
import { CONVERT_FORMATS } from './convert-formats.js';

/**
 * A conversion allocates and drops objects at a high rate, and V8 grows an isolate's young generation
 * with it: up to 16 MB a semi-space on Node 20, 64 MB on Node 24, most of the memory a conversion
 * would use. So it runs in a worker thread whose young generation is capped (measured on the 10 M
 * trace: no slower than the main thread's; on a 1 M trace's conversions, 30–70 MB less on Node 24).
 */
const YOUNG_GENERATION_MB = 16;

function convertInWorker(job: ConvertJob, progress: ProgressLine, engineNext: boolean, totalBytes: number | undefined): Promise<ConvertResult> {
  // A format with an engine stage needs the worker's memory back before the engine runs, but V8 12
  // and later (Node 22, 24) keep a finished worker's heap pages pooled unless the isolate optimizes
  // for size, and DuckDB (~50 MB once loaded) cannot use them. Measured on Node 24, a 1 M-event
  // Parquet conversion peaks at ~190 MB without it, ~145 MB with it. It costs CPU, so only those
  // formats ask for it (V8 flags are read when an isolate starts: the worker's, next).
  if (engineNext) v8.setFlagsFromString('--optimize-for-size');
  return new Promise((resolvePromise, reject) => {
    const worker = new Worker(new URL('../../workers/convert-worker.js', import.meta.url), {
      workerData: job,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    let outcome: { result: ConvertResult } | { error: Error } | undefined;
    worker.on('message', (m: JobMessage) => {
      if (m.type === 'progress') progress.update({ events: m.progress.events, bytes: m.progress.bytesIn, totalBytes });
      else if (m.type === 'failed') outcome = { error: fromWire(m.error) };
      else {
        const { error, ...result } = m.result;
        outcome = { result: { ...result, ...(error ? { error: fromWire(error) as ConvertResult['error'] } : {}) } };
      }
    });
    worker.on('error', (e) => (outcome ??= { error: e }));
    // Settles when the worker is gone, so its memory is too.
    worker.on('exit', (code) => {
      if (!outcome) reject(new Error(`the converting worker exited with code ${code} before it reported`));
      else if ('error' in outcome) reject(outcome.error);
      else resolvePromise(outcome.result);
    });
  });
}

function defaultOutput(input: string, suffix: string): string {
  return `${input.endsWith('.tptrace') ? input.slice(0, -'.tptrace'.length) : input}${suffix}`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** The input's size, for the estimate of the rest (none for what is not a regular file). */
function sizeOf(path: string): number | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

export const convertCommand = defineCommand({
  name: 'convert',
  summary: 'for Perfetto, chrome://tracing, speedscope, babeltrace2, DuckDB (docs/CONVERT.md)',
  description: "Converts a trace to another tool's format, streaming: memory stays flat whatever the trace's size (docs/CONVERT.md).",
  positionals: [{ name: 'FILE', description: 'the trace (.tptrace)' }],
  options: {
    to: { type: 'string', value: 'FORMAT', required: true, description: `the format: ${Object.keys(CONVERT_FORMATS).join(', ')}` },
    output: { type: 'string', short: 'o', value: 'OUT', defaultText: "FILE with .tptrace replaced by the format's suffix (.pftrace, .json, -ctf, ...); - for stdout", description: 'where to write' },
    json: { type: 'boolean', description: 'OTLP/JSON, one export request a line, instead of protobuf (--to otlp only)' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.tptrace', '--to', 'perfetto'], does: 'writes app.pftrace, for ui.perfetto.dev' },
    { args: ['app.tptrace', '--to', 'jsonl', '-o', '-'], does: 'one JSON object per event on stdout' },
    { args: ['app.tptrace', '--to', 'otlp'], does: 'writes app.otlp: OpenTelemetry export requests, for a collector' },
  ],
  run: ({ values, positionals }) => convert(positionals[0]!, values),
});

async function convert(input: string, values: { to: string; output: string | undefined; json: boolean; quiet: boolean }): Promise<number> {
  const format = CONVERT_FORMATS[values.to];
  if (!format) throw new CliError(`--to must be one of ${Object.keys(CONVERT_FORMATS).join(', ')}, not '${values.to}'`);
  if (values.json && !format.json) throw new CliError(`--json is for --to otlp, not --to ${values.to}`);
  const output = values.output ?? defaultOutput(input, format.suffix);
  if (output === '-' && format.output === 'directory') throw new CliError(`--to ${values.to} writes a directory of files; give -o DIR, not -o -`);
  if (resolve(output) === resolve(input)) throw new CliError(`the output ${output} would overwrite the input`);
  const progress = new ProgressLine('converting', { quiet: values.quiet });
  const totalBytes = sizeOf(input);
  const started = performance.now();
  let result: ConvertResult;
  try {
    // stdout belongs to this thread (a worker's is relayed through it), so `-o -` converts here.
    result = output === '-'
      ? await convertTrace(input, await format.create(output, { json: values.json }), (p) => progress.update({ events: p.events, bytes: p.bytesIn, totalBytes }))
      : await convertInWorker({ input, format: values.to, output, json: values.json }, progress, format.finish !== undefined, totalBytes);
  } finally {
    progress.stop();
  }
  const o = format.finish ? await format.finish(result.output) : result.output;
  const s = (performance.now() - started) / 1000;
  const drops = result.dropped > 0 ? `${count(result.dropped)} dropped in ${countOf(result.dropRanges, 'range')}` : 'none dropped';
  const files = format.output === 'directory' ? `${countOf(o.files, 'file')}, ` : '';
  const summary =
    `converted ${countOf(result.events, 'event')} (${drops}) from ${input} (${formatBytes(result.bytesIn)}) to ${o.path === '-' ? 'stdout' : o.path} ` +
    `(${values.to}, ${files}${formatBytes(o.bytes)}) in ${s.toFixed(2)} s: ${formatRate(result.events / s, 'events/s')}, ` +
    `${formatRate(result.bytesIn / s, 'B/s')} in, ${formatRate(o.bytes / s, 'B/s')} out\n`;
  const text = summary + (o.notes ?? []).map((note) => `note: ${note}\n`).join('');
  // The summary goes beside the output, never into it.
  if (output === '-') writeErr(text);
  else await writeOut(text);
  // A damaged input: everything intact was converted; the error says where the input broke.
  if (result.error) throw result.error;
  return 0;
}
