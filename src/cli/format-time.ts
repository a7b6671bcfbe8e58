/** Human-readable durations for CLI output. */
export function formatNs(ns: number): string {
  const a = Math.abs(ns);
  if (a < 1e3) return `${ns.toFixed(0)} ns`;
  if (a < 1e6) return `${(ns / 1e3).toFixed(1)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toFixed(2)} ms`;
  return `${(ns / 1e9).toFixed(3)} s`;
}

/** Fixed-width seconds.microseconds since the trace origin, for one-event-per-line output. */
export function formatOffset(ns: number): string {
  return (ns / 1e9).toFixed(6).padStart(12);
}
