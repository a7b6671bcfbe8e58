import { threadOriginNs } from '../buffers/clock.js';
import { onGcPause } from '../providers/gc-pause-source.js';
import { errorMessage } from '../schema/error-message.js';

export type GCPauseSeverity = 'debug' | 'info' | 'warn';

export interface GCPauseInfo {
  readonly kind: string;
  readonly durationMs: number;
  readonly severity: GCPauseSeverity;
  /** The pause's start on the process monotonic clock (the scale of process.hrtime.bigint()), in ns. */
  readonly startNs: number;
  /** V8's GCCallbackFlags for the pause. */
  readonly flags: number;
}

export interface GCPauseMonitorOptions {
  /** Pauses at least `info` ms long are 'info', at least `warn` ms 'warn', shorter ones 'debug'. Default 10 and 50. */
  readonly thresholdsMs?: { readonly info?: number; readonly warn?: number };
  readonly onPause: (pause: GCPauseInfo) => void;
}

/** Where this thread's performance.now() starts on the process clock: found on the first monitor, not by the import. */
let origin: number | undefined;

function threshold(v: unknown, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new TypeError(`tracepipe: monitorGCPauses thresholdsMs.${name} must be a non-negative number of milliseconds`);
  return v;
}

/**
 * Calls `onPause` for every GC pause of this thread, classified by severity (seed 004), with or
 * without a tracing session. Returns a function that stops monitoring (after handing over pauses
 * still in flight).
 */
export function monitorGCPauses(options: GCPauseMonitorOptions): () => void {
  if (!options || typeof options.onPause !== 'function') throw new TypeError('tracepipe: monitorGCPauses needs { onPause(pause) {} }');
  const info = threshold(options.thresholdsMs?.info, 'info', 10);
  const warn = threshold(options.thresholdsMs?.warn, 'warn', 50);
  if (warn < info) throw new TypeError(`tracepipe: monitorGCPauses thresholdsMs.warn (${warn}) is below thresholdsMs.info (${info})`);
  const onPause = options.onPause;
  const originNs = (origin ??= Number(threadOriginNs()));
  let warned = false;
  return onGcPause((p) => {
    const severity: GCPauseSeverity = p.durationMs >= warn ? 'warn' : p.durationMs >= info ? 'info' : 'debug';
    try {
      onPause({ kind: p.kind, durationMs: p.durationMs, severity, startNs: originNs + p.startMs * 1e6, flags: p.flags });
    } catch (e) {
      // A failing callback must not take the application down from inside a perf_hooks observer.
      if (!warned) process.emitWarning(`tracepipe: monitorGCPauses onPause threw: ${errorMessage(e)}`);
      warned = true;
    }
  });
}
