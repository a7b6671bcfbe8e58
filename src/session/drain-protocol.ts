import type { OtlpOutput } from './otlp-output.js';
import type { MessagePort } from 'node:worker_threads';
import type { DropReasonCounts } from '../format/drop-reason.js';
import type { OtlpExportStats } from '../format/otlp-export-stats.js';

/**
 * What the owning thread and a session's drain worker tell each other (all of it survives structured
 * clone). The session layer defines it; the drain, the sinks and the worker entry follow it.
 */

/** Where the drain worker writes. */
export type SinkSpec =
  /** `newFile`: a name tracepipe made up (a dump's): created exclusively, never an existing file or a planted link. */
  | { readonly kind: 'file'; readonly path: string; readonly newFile?: boolean }
  /** Bytes go back to the owning thread (a user stream or a listener). */
  | { readonly kind: 'port' }
  /** A connected socket's descriptor the drain writes to directly; `prologue` goes out before the trace. */
  | { readonly kind: 'fd'; readonly fd: number; readonly prologue?: Uint8Array }
  /** A ring (flight recorder): nothing is written until a dump is asked for. */
  | { readonly kind: 'ring' }
  /** No byte output: the session only exports over OTLP. */
  | { readonly kind: 'none' };

/** Where one dump of a ring goes. */
export type DumpTarget = Extract<SinkSpec, { kind: 'file' } | { kind: 'fd' }>;

export interface DumpResult {
  readonly eventsWritten: number;
  /** Attempts of the threads in the dump that it does not hold: overwritten, or dropped as they happened. */
  readonly eventsDropped: number;
  readonly bytesWritten: number;
  readonly error?: string;
}

/** The owning thread asks a ring's drain for a dump (the drain reads it with receiveMessageOnPort). */
export interface DumpRequest {
  readonly type: 'dump';
  readonly id: number;
  readonly target: DumpTarget;
  /**
   * A thread that cannot turn its event loop (it is dying) waits for this dump: the drain writes it
   * before anything else, posts its result here, then stores its id in Ctl.DumpsDone.
   */
  readonly reply?: MessagePort;
}

export interface ProducerStats {
  readonly threadId: number;
  readonly dropped: number;
  /** The same drops by reason: buffer full (Drop mode), event larger than a chunk, an argument of the wrong type, parked when the session stopped, Block mode's timeout. */
  readonly droppedByReason: Readonly<DropReasonCounts>;
  /** Block mode: how often this thread parked, and its longest wait. */
  readonly parks: number;
  readonly longestParkNs: number;
}

/** A session's OTLP export, as the drain thread's sink is told it (checked: otlp-output.ts). */
export type OtlpSinkSpec = OtlpOutput;

export interface DrainResult {
  readonly eventsWritten: number;
  readonly eventsDropped: number;
  readonly bytesWritten: number;
  readonly producers: readonly ProducerStats[];
  readonly otlp?: OtlpExportStats;
  readonly error?: string;
}

export interface DataMessage {
  readonly type: 'data';
  readonly bytes: Uint8Array;
}

export type DrainMessage =
  | DataMessage
  | { readonly type: 'running' }
  | { readonly type: 'failed'; readonly error: string }
  | { readonly type: 'done'; readonly result: DrainResult }
  | { readonly type: 'dumped'; readonly id: number; readonly result: DumpResult };
