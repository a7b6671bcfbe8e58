/** The one check of readTrace's options that fails at the call rather than at the first read. */
export function checkReorderWindow(asked: unknown): void {
  if (asked !== undefined && !(typeof asked === 'number' && asked >= 0)) {
    throw new RangeError(`tracepipe: reorderWindowNs must be a non-negative number of nanoseconds; got ${String(asked)}`);
  }
}
