import type { TraceEvent } from '../format/trace-event.js';
import { type CounterKind, RUNTIME_COUNTERS } from '../providers/counters/runtime-counter-catalog.js';
import { eventRole } from '../schema/type-role.js';

/** One value of one counter at one moment, as every counter view (monitor, collect, report) reads it. */
export interface CounterSample {
  readonly timestampNs: number;
  readonly provider: string;
  readonly name: string;
  readonly unit: string;
  readonly value: number;
}

export interface CounterDescription {
  readonly provider: string;
  readonly name: string;
  readonly unit: string;
  readonly kind: CounterKind;
  readonly description: string;
}

const RUNTIME = 'Runtime.Counters';

/** The figures each SessionStats event carries, as counters named per session. */
const SESSION_FIGURES = [
  { field: 'eventsWritten', suffix: 'EventsWritten', unit: 'events', kind: 'interval', description: "events session N's drain wrote during the interval" },
  { field: 'eventsDropped', suffix: 'EventsDropped', unit: 'events', kind: 'interval', description: "events session N's producers dropped during the interval" },
  { field: 'bufferUsePercent', suffix: 'BufferUse', unit: 'percent', kind: 'gauge', description: "share of session N's buffer budget in use" },
] as const;

/**
 * Counters as a trace carries them: declared counters (`<Name>.Counter`, one f64 field named by
 * the unit), Runtime.Counters' per-session figures, and the descriptions its CounterInfo events
 * give. Keeps what it learnt, so a catalog of everything seen so far is at hand.
 */
export class CounterReader {
  private readonly described = new Map<string, CounterDescription>();

  constructor() {
    for (const c of RUNTIME_COUNTERS) this.described.set(`${RUNTIME}/${c.name}`, { provider: RUNTIME, ...c });
  }

  /** The samples an event carries (none for most events); learns from CounterInfo events. */
  samples(e: TraceEvent): CounterSample[] {
    if (e.provider === RUNTIME && e.name === 'CounterInfo') {
      const f = e.fields as { provider: string; counter: string; unit: string; kind: string; description: string };
      this.described.set(`${f.provider}/${f.counter}`, { provider: f.provider, name: f.counter, unit: f.unit, kind: f.kind === 'interval' ? 'interval' : 'gauge', description: f.description });
      return [];
    }
    if (e.provider === RUNTIME && e.name === 'SessionStats') {
      const f = e.fields as Record<string, number>;
      return SESSION_FIGURES.map((s) => {
        const name = `Session${f.session}${s.suffix}`;
        const key = `${RUNTIME}/${name}`;
        if (!this.described.has(key)) this.described.set(key, { provider: RUNTIME, name, unit: s.unit, kind: s.kind, description: s.description.replace('N', String(f.session)) });
        return { timestampNs: e.timestampNs, provider: RUNTIME, name, unit: s.unit, value: Number(f[s.field]) };
      });
    }
    const role = eventRole(e);
    if (role?.kind !== 'counter') return [];
    return [{ timestampNs: e.timestampNs, provider: e.provider, name: role.counter, unit: role.unit, value: Number(e.fields[role.unit]) }];
  }

  /** What the trace or the catalog says of a counter; a counter nobody described is a gauge. */
  describe(provider: string, name: string, unit: string): CounterDescription {
    return this.described.get(`${provider}/${name}`) ?? { provider, name, unit, kind: 'gauge', description: '' };
  }

  /** Where a counter stands in the catalog (Runtime.Counters' own order first, then as described); unknown ones last. */
  position(provider: string, name: string): number {
    const i = [...this.described.keys()].indexOf(`${provider}/${name}`);
    return i < 0 ? Infinity : i;
  }

  /** Every counter described so far (Runtime.Counters' from the catalog, others from the trace). */
  catalog(): CounterDescription[] {
    return [...this.described.values()];
  }
}
