// The globals, not node:perf_hooks: importing that module costs `import 'tracepipe'` more than the rest of this file.
import type { PerformanceEntry } from 'node:perf_hooks';

/** One stop-the-world GC pause of this thread's isolate, as V8 reports it to perf_hooks. */
export interface GcPause {
  /** The true start on this thread's performance.now() clock (ms), however late it was delivered. */
  readonly startMs: number;
  readonly durationMs: number;
  readonly kind: string;
  /** V8's GCCallbackFlags (perf_hooks constants NODE_PERFORMANCE_GC_FLAGS_*). */
  readonly flags: number;
}

export type GcPauseListener = (p: GcPause) => void;

/** V8's GCType bits, as perf_hooks reports them in `entry.detail.kind`. */
const KIND_NAMES: Readonly<Record<number, string>> = {
  1: 'scavenge',
  2: 'minor-mark-compact',
  4: 'mark-compact',
  8: 'incremental-marking',
  16: 'weak-callbacks',
};

export function gcKindName(code: number): string {
  return KIND_NAMES[code] ?? `gc-type-${code}`;
}

const listeners = new Set<GcPauseListener>();
let observer: InstanceType<typeof PerformanceObserver> | undefined;

function deliver(entries: readonly PerformanceEntry[]): void {
  for (const e of entries) {
    const detail = (e as PerformanceEntry & { detail?: { kind?: number; flags?: number } }).detail;
    const pause: GcPause = { startMs: e.startTime, durationMs: e.duration, kind: gcKindName(detail?.kind ?? 0), flags: detail?.flags ?? 0 };
    for (const l of listeners) l(pause);
  }
}

/** Hands pauses that happened but were not yet delivered to the listeners now (e.g. before a session stops). */
export function flushGcPauses(): void {
  if (observer) deliver(observer.takeRecords());
}

/**
 * Calls `listener` for every GC pause of this thread from now on. perf_hooks delivers them when the
 * event loop turns (see docs/PROVIDERS.md for the latency); the observer exists only while someone
 * listens. The returned function stops listening, first handing over pauses still in flight.
 */
export function onGcPause(listener: GcPauseListener): () => void {
  listeners.add(listener);
  if (!observer) {
    observer = new PerformanceObserver((list) => deliver(list.getEntries()));
    observer.observe({ entryTypes: ['gc'] });
  }
  return () => {
    if (!listeners.has(listener) || !observer) return;
    flushGcPauses();
    listeners.delete(listener);
    if (listeners.size > 0) return;
    observer.disconnect();
    observer = undefined;
  };
}
