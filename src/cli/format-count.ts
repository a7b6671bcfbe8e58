/** Counts and rates for CLI output. */

/** "1 stall", "2 stalls", "1,024 events": `plural` for nouns whose plural is not noun + s. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}

const PREFIXES = [
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
] as const;

/**
 * A rate scaled to its size, three significant digits: "850 events/s", "12.3 k events/s",
 * "1.94 M events/s", "640 B/s", "3.1 MB/s" (`unit` "B/s" takes the prefix without a space).
 */
export function formatRate(perSecond: number, unit: string): string {
  const glued = unit === 'B/s';
  for (const [scale, prefix] of PREFIXES) {
    // 999,500/s reads "1.00 M", not "1000 k".
    if (perSecond >= scale * 0.9995) return `${significant(perSecond / scale)} ${prefix}${glued ? '' : ' '}${unit}`;
  }
  return `${perSecond >= 100 || perSecond === 0 ? Math.round(perSecond) : significant(perSecond)} ${unit}`;
}

function significant(v: number): string {
  return v >= 99.95 ? v.toFixed(0) : v >= 9.995 ? v.toFixed(1) : v.toFixed(2);
}
