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

/**
 * A distribution-free interval for the median of the population `values` were drawn from: the order
 * statistics x(k) and x(n+1-k), with k the largest rank whose binomial tail P(Bin(n, 1/2) < k) stays
 * within (1 - confidence) / 2. Undefined when there are too few values for that confidence (n < 6 at 95 %).
 */
export function medianInterval(values, confidence = 0.95) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const alpha = (1 - confidence) / 2;
  // P(Bin(n, 1/2) <= j), summed in logs so large n does not overflow.
  let logChoose = 0;
  let below = 0;
  let k = 0;
  for (let j = 0; j < n; j++) {
    below += Math.exp(logChoose - n * Math.LN2);
    if (below > alpha) break;
    k = j + 1;
    logChoose += Math.log((n - j) / (j + 1));
  }
  return k === 0 ? undefined : { low: s[k - 1], high: s[n - k] };
}

/** Formatters of per-round figures for withInterval: a signed percentage, signed µs, a ratio. */
export const signedPercent = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
export const signedMicros = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} µs`;
export const timesText = (x) => `${x.toFixed(1)}×`;

/** `median (95 % interval low…high)` of per-round values, formatted by `f`. */
export function withInterval(xs, f) {
  const ci = medianInterval(xs);
  return `${f(median(xs))} (${ci ? `${f(ci.low)}…${f(ci.high)}` : 'too few rounds'})`;
}

/** Whether the 95 % interval of the median of `xs` lies within ±`share` of it. */
export function narrow(xs, share) {
  const ci = medianInterval(xs);
  const m = median(xs);
  return ci !== undefined && m > 0 && (ci.high - ci.low) / 2 <= share * m;
}
