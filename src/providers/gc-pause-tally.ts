/** The kinds Runtime.Counters counts apart, in V8's GCType bit order; any other type counts as the last. */
export const TALLY_KINDS = ['scavenge', 'minor-mark-compact', 'mark-compact', 'incremental-marking', 'weak-callbacks', 'other'] as const;
export type TallyKind = (typeof TALLY_KINDS)[number];

/** Per kind: pauses so far, and their total duration (ns). */
const SLOTS = TALLY_KINDS.length * 2;
export const TALLY_BYTES = SLOTS * 8;

/** A kind's slot from V8's GCType (1, 2, 4, 8, 16; anything else is 'other'). */
function kindSlot(type: number): number {
  const i = Math.log2(type);
  return Number.isInteger(i) && i >= 0 && i < TALLY_KINDS.length - 1 ? i : TALLY_KINDS.length - 1;
}

/** Totals per kind at one moment: what a reader subtracts from the next reading. */
export interface TallyReading {
  readonly count: readonly number[];
  readonly ns: readonly number[];
}

/**
 * Running totals of one thread's GC pauses by kind, kept where every taker of its pauses adds to
 * them: at the tail of the thread's GC ring (so the watchdog, which takes the main thread's pauses
 * during a stall, counts them too), or in plain memory for perf_hooks' pauses. Each pause is added
 * once because each is taken once (gc-ring.ts); takers hold the ring while they add.
 */
export class GcPauseTally {
  private readonly f64: Float64Array;

  constructor(buffer: ArrayBufferLike = new ArrayBuffer(TALLY_BYTES), byteOffset = 0) {
    this.f64 = new Float64Array(buffer, byteOffset, SLOTS);
  }

  add(type: number, durationNs: number): void {
    const s = kindSlot(type) * 2;
    this.f64[s]! += 1;
    this.f64[s + 1]! += durationNs;
  }

  /** Adds a pause perf_hooks reported by kind name. */
  addNamed(kind: string, durationNs: number): void {
    const i = TALLY_KINDS.indexOf(kind as TallyKind);
    this.add(i < 0 || i === TALLY_KINDS.length - 1 ? 0 : 1 << i, durationNs);
  }

  read(): TallyReading {
    const count: number[] = [];
    const ns: number[] = [];
    for (let k = 0; k < TALLY_KINDS.length; k++) {
      count.push(this.f64[k * 2]!);
      ns.push(this.f64[k * 2 + 1]!);
    }
    return { count, ns };
  }
}
