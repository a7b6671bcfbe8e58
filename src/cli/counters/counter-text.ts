import type { BoardRow } from './counter-board.js';

/** A row's unit as shown: bytes in MiB, an interval counter as a rate. */
export function unitLabel(row: BoardRow): string {
  const unit = row.unit === 'bytes' ? 'MiB' : row.unit;
  return row.kind === 'interval' ? `${unit} / 1 s` : unit;
}

/** A row's value as shown beside unitLabel(row). */
export function valueText(row: BoardRow): string {
  const v = row.perSecond;
  if (!Number.isFinite(v)) return String(v);
  if (row.unit === 'bytes') return (v / 1024 / 1024).toFixed(1);
  if (row.unit === 'percent') return v.toFixed(1);
  if (row.unit === 'ms') return v.toFixed(2);
  return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2);
}

/** Wall-clock time of a trace timestamp, as the trace's header fixes its origin. */
export function wallClock(originWallNs: bigint, timestampNs: number): Date {
  return new Date(Number(originWallNs / 1_000_000n) + timestampNs / 1e6);
}
