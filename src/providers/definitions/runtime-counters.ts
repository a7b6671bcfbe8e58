import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';
import type { CounterSpec } from '../../schema/counter-type.js';
import { RUNTIME_COUNTERS } from '../counters/runtime-counter-catalog.js';

/** The counters' specs, from the catalog (ids, units and descriptions are contracts). */
const counterSpecs: Record<string, CounterSpec> = {};
for (const c of RUNTIME_COUNTERS) counterSpecs[c.name] = { id: c.id, unit: c.unit, doc: c.description };

/**
 * `Runtime.Counters`: the process's vital signs every `IntervalSec` (default 1), as counters (one
 * `.Counter` event each: CPU, memory, heap spaces, GC by kind, event loop, active resources), with
 * `SessionStats` per live session and a `CounterInfo` for every counter of the process's providers
 * (name, unit, kind, description) as each session starts. docs/COUNTERS.md.
 */
export const runtimeCounters = defineBuiltinProvider('Runtime.Counters', {
  events: {
    CounterInfo: {
      id: 200,
      level: Level.Informational,
      fields: [['provider', 'string'], ['counter', 'string'], ['unit', 'string'], ['kind', 'string'], ['description', 'string']],
      doc: "One counter of the process's providers; kind is gauge (a value now) or interval (an amount during the last interval, shown as a rate).",
    },
    SessionStats: {
      id: 201,
      level: Level.Informational,
      fields: [['session', 'u32'], ['eventsWritten', 'f64'], ['eventsDropped', 'f64'], ['bufferUsePercent', 'f64']],
      doc: "One live tracing session of the process over the interval: events its drain wrote and its producers dropped, and the share of its buffer budget in use.",
    },
  },
  counters: counterSpecs,
}, () => new URL('../counters/runtime-counters-provider.js', import.meta.url).href);
