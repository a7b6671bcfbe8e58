import type { DecodedFields } from '../../format/payload-codec.js';
import type { StreamEventType } from '../../format/trace-event.js';
import { OldestEntry } from '../../format/oldest-entry.js';

/** Where a begin's payload lies in the trace file: its label is decoded from there once the pass is over. */
export interface PayloadAt {
  readonly type: StreamEventType;
  readonly offset: number;
  readonly length: number;
}

/** A span's begin: which span, where, when, and its label or where it is read from (when kept). */
export interface SpanBegin {
  /** Span ids as numbers: tracepipe's are below 2^53 (docs/FORMAT.md). */
  readonly id: number;
  readonly parentId: number;
  /** "Provider/Span". */
  readonly span: string;
  readonly threadId: number;
  readonly startNs: number;
  /** Its label, decoded when it began, or where its begin's payload lies, to decode it later. */
  readonly label: string | PayloadAt | undefined;
}

export interface FinishedSpan extends SpanBegin {
  readonly endNs: number;
  readonly error: boolean;
}

/** Spans held open at most, as elsewhere (span-tracker, span-slices); past that the oldest is set aside. */
export const MAX_OPEN_SPANS = 65_536;

/** A span and its end: its begin's fields copied one by one (an object spread cost 5× the whole pairing). */
export function finished(b: SpanBegin, endNs: number, error: boolean): FinishedSpan {
  return { id: b.id, parentId: b.parentId, span: b.span, threadId: b.threadId, startNs: b.startNs, label: b.label, endNs: Math.max(b.startNs, endNs), error };
}

/**
 * Pairs span begins with ends by span id (unique in a process), in whatever order the caller reads
 * the stream, an end after its begin. Memory: at most `maxOpen` open spans; past that the oldest is
 * set aside (counted, never finished), as the report and the exports do.
 */
export class SpanPairing {
  private readonly open = new Map<number, SpanBegin>();
  private readonly oldest = new OldestEntry(this.open);
  setAside = 0;
  endsWithoutBegin = 0;

  constructor(private readonly maxOpen = MAX_OPEN_SPANS) {}

  begin(b: SpanBegin): void {
    if (this.open.delete(b.id)) this.setAside++;
    this.open.set(b.id, b);
    if (this.open.size > this.maxOpen) {
      this.oldest.take();
      this.setAside++;
    }
  }

  /** The begin of the span ending, taken out, or undefined when it is not held (before the trace, lost, or set aside). */
  end(id: number): SpanBegin | undefined {
    const b = this.open.get(id);
    if (!b) {
      this.endsWithoutBegin++;
      return undefined;
    }
    this.open.delete(id);
    return b;
  }

  /** Spans begun and not ended (nor set aside), oldest first. */
  unfinished(): IterableIterator<SpanBegin> {
    return this.open.values();
  }

  get openCount(): number {
    return this.open.size;
  }
}

/** A span's fields as people read them: its begin's own fields (not the ids), values joined by spaces. */
export function spanLabel(fields: DecodedFields): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'spanId' || k === 'parentSpanId') continue;
    if (typeof v === 'string' ? v !== '' : typeof v === 'number' || typeof v === 'bigint') parts.push(String(v));
  }
  const label = parts.join(' ');
  return label.length > 160 ? `${label.slice(0, 159)}…` : label;
}
