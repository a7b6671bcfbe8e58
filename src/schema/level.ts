/** Event verbosity, as in EventPipe/ETW: lower is more important. */
export const Level = {
  LogAlways: 0,
  Critical: 1,
  Error: 2,
  Warning: 3,
  Informational: 4,
  Verbose: 5,
} as const;
export type Level = (typeof Level)[keyof typeof Level];

const names: Record<number, string> = Object.fromEntries(Object.entries(Level).map(([k, v]) => [v, k]));

export function levelName(level: number): string {
  return names[level] ?? `Level${level}`;
}

export function isLevel(n: unknown): n is Level {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 5;
}
