import type { DecodedFields } from '../../format/payload-codec.js';
import type { BlockEvent } from '../../format/events-block.js';
import { OldestEntry } from '../oldest-entry.js';

/** A span's begin: which span, where, when, and its fields (for its label). */
export interface SpanBegin {
  readonly id: bigint;
  readonly parentId: bigint;
  /** "Provider/Span". */
  readonly span: string;
  readonly threadId: number;
  readonly startNs: number;
  readonly fields: DecodedFields;
}

export interface FinishedSpan extends SpanBegin {
  readonly endNs: number;
  readonly error: boolean;
}

/** Spans held open at most, as elsewhere (span-tracker, span-slices); past that the oldest is set aside. */
export const MAX_OPEN_SPANS = 65_536;

/**
 * Pairs span begins with ends by span id (unique in a process), in whatever order the caller reads
 * the stream, an end after its begin. Memory: at most `maxOpen` open spans; past that the oldest is
 * set aside (counted, never finished), as the report and the exports do.
 */
export class SpanPairing {
  private readonly open = new Map<bigint, SpanBegin>();
  private readonly oldest = new OldestEntry(this.open);
  setAside = 0;
  endsWithoutBegin = 0;

  constructor(private readonly maxOpen = MAX_OPEN_SPANS) {}

  begin(e: BlockEvent, span: string): void {
    const id = e.fields.spanId as bigint;
    if (this.open.delete(id)) this.setAside++;
    this.open.set(id, { id, parentId: e.fields.parentSpanId as bigint, span, threadId: e.threadId, startNs: e.timestampNs, fields: e.fields });
    if (this.open.size > this.maxOpen) {
      this.oldest.take();
      this.setAside++;
    }
  }

  /** The span `e` ends, or undefined when its begin is not held (before the trace, lost, or set aside). */
  end(e: BlockEvent): FinishedSpan | undefined {
    const id = e.fields.spanId as bigint;
    const b = this.open.get(id);
    if (!b) {
      this.endsWithoutBegin++;
      return undefined;
    }
    this.open.delete(id);
    return { ...b, endNs: Math.max(b.startNs, e.timestampNs), error: e.fields.error === true };
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
