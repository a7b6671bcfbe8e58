import type { TraceHeader } from '../format/stream-header.js';
import type { EventBatch } from '../format/trace-reader.js';

/** How a finished conversion went: what the input held and what the writer made of it. */
export interface ExportEnd {
  /** Events handed to the writer. */
  readonly events: number;
  readonly dropped: number;
  readonly dropRanges: number;
  readonly header: TraceHeader;
  /** Why the input ended early (a damaged or truncated trace): every intact event was converted. */
  readonly damage?: string;
}

export interface ExportFiles {
  /** What was written: one file, or a directory of files. */
  readonly path: string;
  readonly files: number;
  readonly bytes: number;
  /** What the format could not carry exactly (e.g. CTF timestamps clamped to stay monotonic), for the user. */
  readonly notes?: readonly string[];
  /** Work left for a format's engine stage (plain data: it crosses from the converting worker). */
  readonly pending?: unknown;
}

/**
 * One output format. The converter hands every batch of the input to `write` in stream order (per
 * thread in sequence order: the tools that read these formats sort by time, and the CTF writer keeps
 * each of its streams monotonic), so nothing is held back and memory stays flat whatever the trace
 * size. Then it calls `finish` (also after a damaged input's intact part), or `abort` if converting
 * failed for another reason or the input broke before its header. `finish` comes only after at least
 * the first batch, which carries the header: writers create their files then.
 */
export interface ExportWriter {
  /** A returned promise means: wait before the next batch (output backpressure, an engine). */
  write(batch: EventBatch): void | Promise<void>;
  finish(end: ExportEnd): Promise<ExportFiles>;
  /** Closes whatever is open; what was written stays for inspection. */
  abort(): Promise<void>;
}

/** The input holds nothing the format can carry (e.g. no CPU samples for a profile format): a user mistake, reported in one line. */
export class ExportInputError extends Error {
  override readonly name = 'ExportInputError';
}
