/**
 * Why an attempt was dropped. The index is the reason's code minus one in the drop-reasons block
 * (docs/FORMAT.md); new reasons are only ever appended, and a reader keeps counts it cannot name.
 */
export const DROP_REASONS = ['full', 'too-large', 'invalid-argument', 'stopping', 'block-timeout', 'overwritten'] as const;
export type DropReason = (typeof DROP_REASONS)[number];
export type DropReasonCounts = Record<DropReason, number>;

export function noDropReasons(): DropReasonCounts {
  return { full: 0, 'too-large': 0, 'invalid-argument': 0, stopping: 0, 'block-timeout': 0, overwritten: 0 };
}

/** Adds counts given in code order (as the format and the slots keep them) to `into`. */
export function addDropReasons(into: DropReasonCounts, counts: readonly number[]): void {
  DROP_REASONS.forEach((r, k) => (into[r] += counts[k] ?? 0));
}
