import { isMainThread as onMainThread, threadId as thisThreadId } from '../schema/this-thread.js';
import { threadOriginNs } from '../buffers/clock.js';
import { attachCallbacks } from '../schema/provider.js';
import { gcHookLoaded, gcHookMissing, onGcHook, recordGcPauses, threadGcRing } from './gc-hook.js';
import { flushGcPauses, gcKindName, type GcPause, onGcPause } from './gc-pause-source.js';
import type { GcRing } from './gc-ring.js';
import { GcPauseTally } from './gc-pause-tally.js';
import { WatchdogDuty } from './event-loop/heartbeat.js';
import { ProviderSessions } from './provider-sessions.js';
import { isServiceThread } from '../session/service-thread.js';
import { setWatchdogDuty } from './event-loop/stall-watchdog.js';
import { runtimeGC } from './definitions/gc.js';
const isMainThread = onMainThread();
const threadId = thisThreadId();

const origin = Number(threadOriginNs());
/**
 * How long a thread that stops a session or exits waits for the watchdog to finish writing pauses it
 * took: a few µs normally; longer only if the watchdog is descheduled mid-write.
 */
const FLUSH_WAIT_MS = 1000;

/**
 * Writes every pause `ring` holds as a `GCPause` of `thread` (the ring's thread); each pause once,
 * whichever thread calls. Returns whether all of them were handed over (see GcRing.take).
 */
export function writeGcPauses(ring: GcRing, thread: number, waitMs = 0): boolean {
  const all = ring.take((r) => runtimeGC.GCPause.writeAt((r.startNs - origin) / 1e6, r.durationNs, gcKindName(r.type), r.flags, r.heapUsedAfter, thread, r.preemptions), waitMs);
  const lost = ring.takeLost();
  if (lost > 0) runtimeGC.GCPausesLost.write(lost, thread);
  return all;
}

/** Without the hook, the totals of the pauses perf_hooks delivered (with it, the ring keeps them). */
let observedTally: GcPauseTally | undefined;

/** Without the hook: perf_hooks' entries, which know neither the heap nor preemptions. */
function writeObservedPause(p: GcPause): void {
  const ns = Math.round(p.durationMs * 1e6);
  observedTally!.addNamed(p.kind, ns);
  runtimeGC.GCPause.writeAt(p.startMs, ns, p.kind, p.flags, NaN, threadId, NaN);
}

/**
 * Writes the thread's pauses before a session stops or the thread ends. While the hook records,
 * `GCPausesFlushed` then says every pause that ended before it is in the trace: its time is read
 * before the take, so a pause after it (the stop's own allocation may collect) is one the trace
 * cannot hold, and readers can tell the two apart. Not written when the watchdog was still taking
 * after FLUSH_WAIT_MS: what it took may not be written yet.
 */
function flush(): void {
  const ring = threadGcRing();
  if (!ring) return flushGcPauses();
  const at = performance.now();
  if (writeGcPauses(ring, threadId, FLUSH_WAIT_MS) && stop) runtimeGC.GCPausesFlushed.writeAt(at, threadId);
}

/** Starts recording this thread's pauses; returns how to stop, which writes what is still pending. */
function start(): () => void {
  const ring = threadGcRing();
  if (!ring) {
    if (gcHookMissing && isMainThread) {
      process.emitWarning(`tracepipe: GC pauses are recorded without the GC hook (${gcHookMissing}): Runtime.GC writes them and Runtime.Counters counts them when the event loop turns, and those pending when the process exits are lost (docs/PROVIDERS.md)`);
    }
    observedTally ??= new GcPauseTally();
    return onGcPause(writeObservedPause);
  }
  // The hook's doorbell: the loop turned after pauses, the moment to write what the ring holds.
  const unhook = onGcHook(() => writeGcPauses(ring, threadId))!;
  recordGcPauses(true);
  // What the ring holds already (a startup's own collections, held before this session existed).
  writeGcPauses(ring, threadId);
  return () => {
    // Written while still recording: a collection these writes cause is recorded, and written next.
    writeGcPauses(ring, threadId, FLUSH_WAIT_MS);
    const at = performance.now();
    recordGcPauses(false);
    if (writeGcPauses(ring, threadId, FLUSH_WAIT_MS)) runtimeGC.GCPausesFlushed.writeAt(at, threadId);
    unhook();
  };
}

let stop: (() => void) | undefined;
const recorders = new Set<'gc' | 'counters'>();

/**
 * Records this thread's pauses while Runtime.GC or Runtime.Counters wants them: one GC hook listener
 * (or one perf_hooks listener) serves both, writing GCPause events when Runtime.GC is on and adding
 * every pause to the thread's totals by kind either way.
 */
export function recordGcPausesFor(user: 'gc' | 'counters', on: boolean): void {
  if (on) recorders.add(user);
  else recorders.delete(user);
  if (recorders.size > 0) stop ??= start();
  else {
    stop?.();
    stop = undefined;
  }
}

/**
 * Takes the pauses recorded so far (writing them when Runtime.GC is on) and returns the thread's
 * running totals by kind; undefined while nobody records.
 */
export function takeGcTally(): GcPauseTally | undefined {
  if (!stop) return undefined;
  const ring = threadGcRing();
  if (!ring) {
    flushGcPauses();
    return observedTally;
  }
  writeGcPauses(ring, threadId);
  return ring.tally;
}

const sessions = new ProviderSessions('Runtime.GC', (s) => {
  if (isServiceThread) return;
  recordGcPausesFor('gc', s.size > 0);
  // With the hook, the watchdog writes the main thread's pauses while its loop is blocked.
  if (isMainThread && gcHookLoaded) setWatchdogDuty(WatchdogDuty.GcDuringStalls, s.size > 0 ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
});

// What runtimeGC does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/gc.ts).
attachCallbacks(runtimeGC, { onEnable: sessions.onEnable, onDisable: sessions.onDisable, onFlush: flush });
