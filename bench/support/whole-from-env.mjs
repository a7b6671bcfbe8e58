// Benchmarks' settings from the environment: a typo must stop the run, not measure a default.

/** A positive whole number from the environment variable `name`, else `fallback`; anything else stops the bench. */
export function wholeFromEnv(name, fallback) {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || text.trim() === '') throw new Error(`${name} must be a whole number of at least 1, not '${text}'`);
  return n;
}
