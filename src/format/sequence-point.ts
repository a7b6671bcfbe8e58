import { ByteReader } from './byte-reader.js';
import { MAX_THREADS } from './reader-limits.js';
import type { ThreadProgress } from './trace-writer.js';
import { unzigzag } from './varint.js';

/**
 * A sequence point as it lies in the stream. Its per-thread progress (up to MAX_THREADS entries) is
 * validated when read but decoded only on demand: most readers need only its time, and one object per
 * thread per point is what let a file of sequence points alone push a reader's heap past its bound.
 * The bytes are the parser's during the handler call only; keep() copies them for later.
 */
export class SequencePoint {
  private constructor(
    readonly timeNs: number,
    readonly maxLatenessNs: number,
    readonly threadCount: number,
    private readonly entries: Uint8Array,
    private readonly base: number,
  ) {}

  /** Reads a sequence-point block's payload; `base` is its stream offset, for errors. */
  static read(payload: Uint8Array, base: number): SequencePoint {
    const r = new ByteReader(payload, 0, payload.length, base);
    const timeNs = unzigzag(r.varint());
    const maxLatenessNs = r.varint();
    const n = r.varint();
    if (n > MAX_THREADS) r.overLimit(`a sequence point of ${n} threads (at most ${MAX_THREADS})`);
    const start = r.pos;
    for (let i = 0; i < 3 * n; i++) r.varint();
    if (!r.done) r.fail('trailing bytes in a sequence point');
    return new SequencePoint(timeNs, maxLatenessNs, n, payload.subarray(start), base + start);
  }

  /** Each thread's progress, decoded now (during the handler call, or from a keep() copy). */
  threads(): ThreadProgress[] {
    const r = new ByteReader(this.entries, 0, this.entries.length, this.base);
    const out: ThreadProgress[] = [];
    for (let i = 0; i < this.threadCount; i++) out.push({ threadId: r.varint(), nextSeq: r.varint(), dropped: r.varint() });
    return out;
  }

  /** Attempts dropped so far, all threads together. */
  dropped(): number {
    const r = new ByteReader(this.entries, 0, this.entries.length, this.base);
    let n = 0;
    for (let i = 0; i < this.threadCount; i++) {
      r.varint();
      r.varint();
      n += r.varint();
    }
    return n;
  }

  /** A copy that outlives the handler call. */
  keep(): SequencePoint {
    return new SequencePoint(this.timeNs, this.maxLatenessNs, this.threadCount, this.entries.slice(), this.base);
  }
}
