import { isMainThread, threadId } from 'node:worker_threads';
import { threadOriginNs } from '../buffers/clock.js';
import { Level } from '../schema/level.js';
import { defineProvider } from '../schema/provider.js';
import { flushGcPauses, type GcPause, onGcPause } from './gc-pause-source.js';
import type { GcHandoff } from './gc-handoff.js';
import { WatchdogDuty } from './heartbeat.js';
import { ProviderSessions } from './provider-sessions.js';
import { isServiceThread } from './service-thread.js';
import { StallGcTracer } from './stall-gc-tracer.js';
import { setWatchdogDuty, watchdogHandoff } from './stall-watchdog.js';

const origin = Number(threadOriginNs());
/** The kinds V8's trace events show, so the kinds the watchdog may have written during a stall. */
const WATCHDOG_KINDS = new Set(['scavenge', 'mark-compact']);
const RETRY_MS = 10;
/**
 * Retries (each one means the loop turned, so the stall is over) after which a window still open
 * means the watchdog is gone: write what is held.
 */
const GIVE_UP_RETRIES = 100;

function write(p: GcPause): void {
  runtimeGC.GCPause.writeAt(p.startMs, Math.round(p.durationMs * 1e6), p.kind, p.flags, p.heapUsedAfter, threadId);
}

/** Main-thread pauses held back while the watchdog may still claim them, oldest first. */
let held: GcPause[] = [];
let retries = 0;
let retry: NodeJS.Timeout | undefined;

function release(handoff: GcHandoff, force: boolean): void {
  const windowStart = handoff.windowStartNs;
  const before = held.length;
  while (held.length > 0) {
    const startNs = origin + held[0]!.startMs * 1e6;
    if (!force && startNs >= windowStart) break;
    const p = held.shift()!;
    if (!handoff.claimed(startNs)) write(p);
  }
  clearTimeout(retry);
  retry = undefined;
  if (held.length < before) retries = 0;
  if (held.length === 0) return;
  retry = setTimeout(() => release(handoff, ++retries > GIVE_UP_RETRIES), RETRY_MS);
  retry.unref();
}

function onPause(p: GcPause): void {
  const handoff = watchdogHandoff();
  if (!handoff || !WATCHDOG_KINDS.has(p.kind)) return write(p);
  held.push(p);
  release(handoff, false);
}

let stop: (() => void) | undefined;
let enabledSessions = 0;

const sessions = new ProviderSessions('Runtime.GC', (s) => {
  if (isServiceThread) return;
  // A session that stops gets the pauses in flight or held back: its onDisable runs while it still records.
  if (s.size < enabledSessions && stop) {
    flushGcPauses();
    const handoff = watchdogHandoff();
    if (handoff) release(handoff, true);
  }
  enabledSessions = s.size;
  if (isMainThread && StallGcTracer.supported) setWatchdogDuty(WatchdogDuty.GcDuringStalls, s.size > 0 ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
  if (s.size > 0 && !stop) stop = onGcPause(onPause);
  else if (s.size === 0 && stop) {
    stop();
    stop = undefined;
  }
});

/**
 * `Runtime.GC`: one `GCPause` per V8 pause of the thread named in `thread`. The event's timestamp is
 * the pause's true start, even though it is written later (the reader puts it back in order). perf_hooks
 * hands pauses over when the loop turns; while the main thread's loop is blocked longer than
 * `StallMs` (default 100), the watchdog thread writes its scavenges and mark-compacts from V8's trace
 * events instead (Linux; see docs/PROVIDERS.md).
 */
export const runtimeGC = defineProvider('Runtime.GC', {
  events: {
    GCPause: {
      id: 1,
      level: Level.Informational,
      fields: [['durationNs', 'u64'], ['kind', 'string'], ['flags', 'u32'], ['heapUsedAfter', 'f64'], ['thread', 'u32']],
      doc: 'A stop-the-world GC pause of `thread`; kind is scavenge, mark-compact, incremental-marking, weak-callbacks or what V8 reports; heapUsedAfter is NaN when unknown.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
