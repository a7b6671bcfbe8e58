import type { TraceEvent } from '../format/trace-event.js';
import type { CounterKind } from '../providers/counters/runtime-counter-catalog.js';
import { CounterReader } from './counter-samples.js';

/** One counter over a whole trace. */
export interface CounterStat {
  readonly provider: string;
  readonly name: string;
  readonly unit: string;
  readonly kind: CounterKind;
  readonly description: string;
  readonly samples: number;
  readonly min: number;
  readonly mean: number;
  readonly max: number;
  readonly last: number;
  /** Sum of the values: for an interval counter, its amount over the trace. */
  readonly total: number;
}

interface Running {
  provider: string;
  name: string;
  unit: string;
  samples: number;
  min: number;
  max: number;
  sum: number;
  last: number;
}

/** Every counter of a trace (declared counters, Runtime.Counters' figures), summed up as the events go by. */
export class CounterSummary {
  private readonly reader = new CounterReader();
  private readonly byKey = new Map<string, Running>();

  add(e: TraceEvent): void {
    for (const s of this.reader.samples(e)) {
      const key = `${s.provider}/${s.name}`;
      let r = this.byKey.get(key);
      if (!r) this.byKey.set(key, (r = { provider: s.provider, name: s.name, unit: s.unit, samples: 0, min: Infinity, max: -Infinity, sum: 0, last: NaN }));
      r.samples++;
      r.min = Math.min(r.min, s.value);
      r.max = Math.max(r.max, s.value);
      r.sum += s.value;
      r.last = s.value;
    }
  }

  /** Each counter seen, by provider, then as the catalog orders them. */
  stats(): CounterStat[] {
    const list = [...this.byKey.values()].map((r): CounterStat => {
      const d = this.reader.describe(r.provider, r.name, r.unit);
      return { provider: r.provider, name: r.name, unit: r.unit, kind: d.kind, description: d.description, samples: r.samples, min: r.min, mean: r.sum / r.samples, max: r.max, last: r.last, total: r.sum };
    });
    return list.sort((a, b) => a.provider.localeCompare(b.provider) || this.reader.position(a.provider, a.name) - this.reader.position(b.provider, b.name) || a.name.localeCompare(b.name));
  }
}
