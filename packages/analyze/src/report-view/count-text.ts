// Counts as the page writes them: "1 stall", "2 stalls", "1,024 samples". A classic script, inlined
// before the others, which use its one global: countOf.

function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}
