import type { SpanKey } from './otlp-signals.js';

/** Ended spans remembered at most: memory stays bounded whatever the trace. */
const MAX_REMEMBERED = 65_536;

/**
 * What is kept of the latest ended spans for children that begin after their parent ended: their
 * trace, trace state and W3C span id in rings of MAX_REMEMBERED slots (the oldest overwritten), found
 * by span id through a map to the slot: no object per span, and no walk of a map to find its oldest.
 */
export class EndedSpans {
  private readonly slotOf = new Map<SpanKey, number>();
  private readonly keys: SpanKey[] = [];
  private readonly traceIds: Uint8Array[] = [];
  private readonly traceStates: string[] = [];
  private readonly spanIds: Uint8Array[] = [];
  private next = 0;

  remember(id: SpanKey, traceId: Uint8Array, traceState: string, spanId: Uint8Array): void {
    const slot = this.next;
    this.next = (slot + 1) % MAX_REMEMBERED;
    if (slot < this.keys.length && this.slotOf.get(this.keys[slot]!) === slot) this.slotOf.delete(this.keys[slot]!);
    this.keys[slot] = id;
    this.traceIds[slot] = traceId;
    this.traceStates[slot] = traceState;
    this.spanIds[slot] = spanId;
    this.slotOf.set(id, slot);
  }

  /** The slot of an ended span still remembered, else -1. */
  find(id: SpanKey): number {
    return this.slotOf.get(id) ?? -1;
  }
  traceId(slot: number): Uint8Array {
    return this.traceIds[slot]!;
  }
  traceState(slot: number): string {
    return this.traceStates[slot]!;
  }
  spanId(slot: number): Uint8Array {
    return this.spanIds[slot]!;
  }
}
