/** Anything that lies over [startNs, endNs). */
export interface Span {
  readonly startNs: number;
  readonly endNs: number;
}

/**
 * Finds which of a fixed set of intervals overlap a query, for intervals that nest and overlap each
 * other (spans, stalls): sorted by start, with the running maximum of the ends, so a query walks back
 * from the last interval starting before its end only while some earlier one may still reach it.
 */
export class OverlapIndex<T extends Span> {
  private readonly items: T[];
  private readonly reach: Float64Array;

  constructor(items: Iterable<T>) {
    this.items = [...items].sort((a, b) => a.startNs - b.startNs);
    this.reach = new Float64Array(this.items.length);
    let max = -Infinity;
    this.items.forEach((it, i) => (this.reach[i] = max = Math.max(max, it.endNs)));
  }

  get size(): number {
    return this.items.length;
  }

  /** Calls `fn` for each interval that shares time with [fromNs, toNs) (touching is not sharing). */
  forEach(fromNs: number, toNs: number, fn: (item: T) => void): void {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items[mid]!.startNs < toNs) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0 && this.reach[i]! > fromNs; i--) {
      const it = this.items[i]!;
      if (it.endNs > fromNs && it.endNs > it.startNs) fn(it);
    }
  }
}

/** OverlapIndexes by a key (a thread, a span type), each over its own intervals. */
export function indexBy<K, T extends Span>(items: Iterable<T>, key: (item: T) => K): Map<K, OverlapIndex<T>> {
  const groups = new Map<K, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = groups.get(k);
    if (list) list.push(it);
    else groups.set(k, [it]);
  }
  return new Map([...groups].map(([k, list]) => [k, new OverlapIndex(list)]));
}
