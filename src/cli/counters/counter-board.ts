import { type CounterDescription, CounterReader, type CounterSample } from '../../analysis/counter-samples.js';
import type { TraceEvent } from '../../format/trace-event.js';

/** The provider whose publications set the pace: each ends with its IntervalMs counter. */
export const PACE_PROVIDER = 'Runtime.Counters';
const PACE_COUNTER = 'IntervalMs';

export interface BoardRow extends CounterDescription {
  readonly value: number;
  /** For an interval counter, its amount per second; otherwise the value. */
  readonly perSecond: number;
  /** When the value last changed (trace ns). */
  readonly changedNs: number;
}

export interface BoardInterval {
  readonly timestampNs: number;
  readonly intervalMs: number;
  readonly rows: readonly BoardRow[];
}

interface Cell {
  sample: CounterSample;
  changedNs: number;
}

/**
 * The latest value of every counter of the providers shown, closed into an interval at each
 * Runtime.Counters publication: what `counters monitor` draws and `counters collect` writes, one
 * row per counter per interval.
 */
export class CounterBoard {
  private readonly reader = new CounterReader();
  private readonly cells = new Map<string, Cell>();
  private intervalMs = NaN;

  constructor(
    /** Providers whose counters are shown (Runtime.Counters may be only the pace). */
    private readonly shown: ReadonlySet<string>,
    private readonly onInterval: (i: BoardInterval) => void,
  ) {}

  push(e: TraceEvent): void {
    for (const s of this.reader.samples(e)) {
      const key = `${s.provider}/${s.name}`;
      const cell = this.cells.get(key);
      if (!cell) this.cells.set(key, { sample: s, changedNs: s.timestampNs });
      else {
        if (cell.sample.value !== s.value) cell.changedNs = s.timestampNs;
        cell.sample = s;
      }
      if (s.provider === PACE_PROVIDER && s.name === PACE_COUNTER) {
        this.intervalMs = s.value;
        this.onInterval({ timestampNs: s.timestampNs, intervalMs: s.value, rows: this.rows() });
      }
    }
  }

  /** Every counter shown, grouped by provider (in the order given), then in catalog order. */
  rows(): BoardRow[] {
    const out: BoardRow[] = [];
    for (const { sample: s, changedNs } of this.cells.values()) {
      if (!this.shown.has(s.provider)) continue;
      const d = this.reader.describe(s.provider, s.name, s.unit);
      const perSecond = d.kind === 'interval' ? (s.value * 1000) / this.intervalMs : s.value;
      out.push({ ...d, unit: s.unit, value: s.value, perSecond: Number.isFinite(perSecond) ? perSecond : s.value, changedNs });
    }
    const order = [...this.shown];
    const at = (r: BoardRow): number => this.reader.position(r.provider, r.name);
    return out.sort((a, b) => order.indexOf(a.provider) - order.indexOf(b.provider) || at(a) - at(b) || a.name.localeCompare(b.name));
  }

  /** Every counter described so far. */
  catalog(): CounterDescription[] {
    return this.reader.catalog();
  }
}
