/**
 * Edit distance between two words, a swap of neighbours counting as one edit (optimal string
 * alignment): `fromat` is one edit from `format`.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known name a mistyped one most likely meant: the nearest within a third of the word's length
 * (at least one edit), or the only name it is the start of; undefined when nothing is that close.
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const prefixed = names.filter((n) => typed.length >= 2 && n.startsWith(typed));
  if (prefixed.length === 1) return prefixed[0];
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const n of names) {
    const dist = editDistance(typed, n);
    if (dist < bestDistance) [best, bestDistance] = [n, dist];
  }
  return bestDistance <= limit ? best : undefined;
}
