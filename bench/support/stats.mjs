/** Summaries of repeated measurements: the median is the figure, min and max show the spread. */

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function summarize(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}

/** `12.3 (min 11.9, max 14.0)` with the given number of decimals. */
export function formatSummary(s, decimals = 1) {
  return `${s.median.toFixed(decimals)} (min ${s.min.toFixed(decimals)}, max ${s.max.toFixed(decimals)})`;
}
