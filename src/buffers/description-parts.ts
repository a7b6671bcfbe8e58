import { MAX_DESCRIPTION_BYTES } from '../schema/definition-limits.js';
import type { RecordVisitor } from './chunk-scanner.js';

/**
 * Puts descriptions back together on the drain's side (record-abi.ts): a description larger than the
 * room in a chunk arrives in parts, in consecutive metadata records of its thread, each saying where
 * its bytes start. A part that does not continue what is held (its thread gave up a description half
 * written and starts it again from 0 later, or a chunk was lost) discards what is held. At most one
 * description per thread is held, of at most MAX_DESCRIPTION_BYTES.
 */
export class DescriptionParts {
  /** Per slot: the parts held so far, and their total length. */
  private readonly held: (Uint8Array[] | undefined)[] = [];
  private readonly heldBytes: number[] = [];

  /** A metadata record of `slot` (bytes `u8[start, start+len)`): hands each complete description to `v`. */
  add(v: RecordVisitor, slot: number, u8: Uint8Array, start: number, len: number, offset: number, last: boolean): void {
    if (offset === 0 && last) {
      // A whole description in one record, as almost all are: nothing to copy.
      this.drop(slot);
      return v.metadata(slot, u8, start, len);
    }
    if (offset === 0) this.start(slot);
    const parts = this.held[slot];
    if (parts === undefined || offset !== this.heldBytes[slot] || offset + len > MAX_DESCRIPTION_BYTES) return this.drop(slot);
    parts.push(u8.slice(start, start + len));
    this.heldBytes[slot] = offset + len;
    if (!last) return;
    const whole = new Uint8Array(offset + len);
    let at = 0;
    for (const p of parts) {
      whole.set(p, at);
      at += p.length;
    }
    this.drop(slot);
    v.metadata(slot, whole, 0, whole.length);
  }

  private start(slot: number): void {
    this.held[slot] = [];
    this.heldBytes[slot] = 0;
  }

  private drop(slot: number): void {
    this.held[slot] = undefined;
  }
}
