/**
 * Durations in milliseconds, exact to the nanosecond. Every clock tracepipe reads (process.hrtime,
 * performance.now) counts whole nanoseconds, but a millisecond double holds them only approximately:
 * the difference of two readings, or a sum of durations, carries the error of each (110.119 ms became
 * 110.11900000000605). Rounding to whole nanoseconds gives back what the clocks measured; a whole
 * number of nanoseconds divided by 1e6 prints as its exact decimal.
 */

/** `toMs - fromMs`, two readings of a millisecond clock, to the nanosecond. */
export function elapsedMs(fromMs: number, toMs: number): number {
  return Math.round((toMs - fromMs) * 1e6) / 1e6;
}

/** A duration in milliseconds (a field written by a tracer, of any version) as whole nanoseconds. */
export function msToNs(ms: number): number {
  return Math.round(ms * 1e6);
}

/** A duration in milliseconds, rounded to the nanosecond: what its clock measured. */
export function exactMs(ms: number): number {
  return Math.round(ms * 1e6) / 1e6;
}
