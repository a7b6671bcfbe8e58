import { convertTrace, type ConvertProgress, type ConvertResult } from '../../export/convert-trace.js';
import { ExportTargetError } from '../../export/export-output.js';
import { ExportInputError } from '../../export/export-writer.js';
import { TraceFormatError, type TraceErrorCode } from '../../format/format-error.js';
import { CliError } from '../cli-error.js';
import { CONVERT_FORMATS } from './convert-formats.js';

/** What the converting worker is asked to do. */
export interface ConvertJob {
  readonly input: string;
  readonly format: string;
  readonly output: string;
  readonly json: boolean;
}

/** An error as it crosses from the worker: the kinds the CLI reports in one line keep their kind. */
export type WireError =
  | { readonly kind: 'trace'; readonly code: TraceErrorCode; readonly message: string; readonly offset: number }
  | { readonly kind: 'cli'; readonly message: string; readonly exitCode: number }
  | { readonly kind: 'target'; readonly message: string }
  | { readonly kind: 'input'; readonly message: string }
  | { readonly kind: 'other'; readonly message: string; readonly stack: string | undefined };

export interface JobResult extends Omit<ConvertResult, 'error'> {
  readonly error?: WireError;
}

export type JobMessage =
  | { readonly type: 'progress'; readonly progress: ConvertProgress }
  | { readonly type: 'done'; readonly result: JobResult }
  | { readonly type: 'failed'; readonly error: WireError };

export function toWire(e: unknown): WireError {
  if (e instanceof TraceFormatError) return { kind: 'trace', code: e.code, message: e.message, offset: e.offset };
  if (e instanceof CliError) return { kind: 'cli', message: e.message, exitCode: e.exitCode };
  if (e instanceof ExportTargetError) return { kind: 'target', message: e.message };
  if (e instanceof ExportInputError) return { kind: 'input', message: e.message };
  const err = e instanceof Error ? e : new Error(String(e));
  return { kind: 'other', message: err.message, stack: err.stack };
}

export function fromWire(w: WireError): Error {
  switch (w.kind) {
    case 'trace': return new TraceFormatError(w.code, w.message, w.offset);
    case 'cli': return new CliError(w.message, w.exitCode);
    case 'target': return new ExportTargetError(w.message);
    case 'input': return new ExportInputError(w.message);
    case 'other': {
      const e = new Error(w.message);
      e.stack = w.stack;
      return e;
    }
  }
}

const PROGRESS_EVERY_MS = 100;

/** Converts `job` (in the converting worker), telling `post` its progress at most every 100 ms. */
export async function runConvertJob(job: ConvertJob, post: (m: JobMessage) => void): Promise<void> {
  try {
    const writer = await CONVERT_FORMATS[job.format]!.create(job.output, { json: job.json });
    let last = 0;
    const result = await convertTrace(job.input, writer, (progress) => {
      const now = performance.now();
      if (now - last < PROGRESS_EVERY_MS) return;
      last = now;
      post({ type: 'progress', progress });
    });
    const { error, ...rest } = result;
    post({ type: 'done', result: { ...rest, ...(error ? { error: toWire(error) } : {}) } });
  } catch (e) {
    post({ type: 'failed', error: toWire(e) });
  }
}
