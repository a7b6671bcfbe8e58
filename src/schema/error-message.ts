/**
 * What a caught value says, whatever was thrown: application callbacks (a provider's onEnable, a
 * listener) may throw null, a string, or an object that cannot even be turned into a string, and the
 * code that reports it must not throw in turn.
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}
