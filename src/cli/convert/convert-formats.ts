import { ChromeWriter } from '../../export/chrome-writer.js';
import { CsvWriter } from '../../export/csv-writer.js';
import { CtfWriter } from '../../export/ctf-writer.js';
import type { ExportFiles, ExportWriter } from '../../export/export-writer.js';
import { JsonlWriter } from '../../export/jsonl-writer.js';
import { OtlpWriter } from '../../export/otlp-writer.js';
import { PerfettoWriter } from '../../export/perfetto-writer.js';
import { SpeedscopeWriter } from '../../export/speedscope-writer.js';
import { loadAnalyze } from '../analyze-loader.js';

/** What the command line says beyond the format and the paths. */
export interface ConvertOptions {
  readonly json: boolean;
}

export interface ConvertFormat {
  /** One file (or stdout with `-o -`), or a directory of files. */
  readonly output: 'file' | 'directory';
  /** Replaces `.tptrace` in the input's name to make the default output's. */
  readonly suffix: string;
  /** The streaming stage: runs in the converting worker. */
  create(path: string, options: ConvertOptions): ExportWriter | Promise<ExportWriter>;
  /** The format has a JSON variant (`--json`). */
  readonly json?: boolean;
  /** An engine stage after it, if the format has one: runs in the CLI's thread once the worker (and its heap) is gone. */
  finish?(streamed: ExportFiles): Promise<ExportFiles>;
}

const analyze = () => loadAnalyze('tracepipe convert --to parquet');

/** The names are the `--to` values (a contract: add, never rename). */
export const CONVERT_FORMATS: Readonly<Record<string, ConvertFormat>> = {
  perfetto: { output: 'file', suffix: '.pftrace', create: (p) => new PerfettoWriter(p) },
  chrome: { output: 'file', suffix: '.json', create: (p) => new ChromeWriter(p) },
  ctf: { output: 'directory', suffix: '-ctf', create: (p) => new CtfWriter(p) },
  jsonl: { output: 'file', suffix: '.jsonl', create: (p) => new JsonlWriter(p) },
  csv: { output: 'directory', suffix: '-csv', create: (p) => new CsvWriter(p) },
  speedscope: { output: 'file', suffix: '.speedscope.json', create: (p) => new SpeedscopeWriter(p) },
  otlp: { output: 'file', suffix: '.otlp', json: true, create: (p, o) => new OtlpWriter(p, o.json) },
  parquet: {
    output: 'directory',
    suffix: '-parquet',
    create: async (p) => (await analyze()).createParquetWriter(p),
    finish: async (streamed) => (await analyze()).finishParquet(streamed),
  },
};
