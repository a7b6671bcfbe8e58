import { loadNativeAddon } from '../../session/native-addon.js';
import type { Heartbeat } from './heartbeat.js';
import type { RestClock, RestProbe } from './rest-clock.js';

/** The loop-metrics addon (native/gc-hook/loop_metrics.cc), built at install with the GC hook. */
interface LoopMetricsAddon {
  /** The calling thread's loop is the one read from now on. */
  watchThisLoop(): void;
  /** Where this thread's readings go: idle time (ms), when read (ms), 1 while in the poll. */
  bind(out: Float64Array): void;
  /** A reading into the bound array; false when no loop is watched. */
  read(): boolean;
  /** The heartbeat (its SharedArrayBuffer) sleepWhileResting reads. */
  watchHeartbeat(sab: SharedArrayBuffer): void;
  /**
   * Sleeps in native code, reading the watched loop every `pollMs` against the rest baseline in the
   * heartbeat, until it has lost `tailMs` of idle time, stopped resting, the wake count is no longer
   * `seen`, or `maxMs` passed.
   */
  sleepWhileResting(seen: number, pollMs: number, maxMs: number, tailMs: number): void;
  /**
   * From now on, the first turn of the calling thread's loop with at least `thresholdMs` of work (its
   * time less its idle time) calls `onTurn(workMs)` as it ends, once.
   */
  armTurnMeter(thresholdMs: number, onTurn: (workMs: number) => void): void;
  /** That much of the turn under way is not counted (the thread's own timer ran for it). */
  discountTurnMeter(ms: number): void;
  disarmTurnMeter(): void;
}

const { addon, missing } = loadNativeAddon<LoopMetricsAddon>('loop_metrics');
/** Why this process reads the main thread's rest from its schedstat though the addon was not turned off (TRACEPIPE_GC_HOOK=0). */
export const loopMetricsMissing = missing;

/**
 * Idle time a resting loop may lose without being taken for awake: the rest of the turn in which it
 * began resting, after its reading. A wake shorter than that which ended before the watchdog looked
 * goes unseen: the sampler would have rested on after it anyway.
 */
const REST_TAIL_MS = 1;
/**
 * The longest the watchdog stays in the addon's rest loop: it comes back to JavaScript at least this
 * often (a stop or a new setting is seen within a poll either way).
 */
const NATIVE_REST_MS = 1000;

/** The calling thread's turn meter (see LoopMetricsAddon.armTurnMeter). */
export interface TurnMeter {
  arm(thresholdMs: number, onTurn: (workMs: number) => void): void;
  discount(ms: number): void;
  disarm(): void;
}

/** The addon's turn meter, for the thread that arms it; undefined without the addon. */
export const turnMeter: TurnMeter | undefined = addon && { arm: addon.armTurnMeter, discount: addon.discountTurnMeter, disarm: addon.disarmTurnMeter };

/** On the main thread: puts its loop up for reading from other threads; false without the addon. */
export function watchThisLoop(): boolean {
  addon?.watchThisLoop();
  return addon !== undefined;
}

/** Readings of the watched loop's libuv idle time (its time waiting in the poll), from any thread. */
class LoopIdleReader {
  private readonly out = new Float64Array(3);

  constructor(private readonly native: LoopMetricsAddon) {
    native.bind(this.out);
  }

  read(): boolean {
    return this.native.read();
  }

  get idleMs(): number {
    return this.out[0]!;
  }

  /** When the reading was taken (ms on the process monotonic clock). */
  get atMs(): number {
    return this.out[1]!;
  }
}

/** The addon binds one array per thread: every reader on this thread is this one. */
let threadReader: LoopIdleReader | undefined;

function openReader(): LoopIdleReader | undefined {
  if (!addon) return undefined;
  threadReader ??= new LoopIdleReader(addon);
  return threadReader.read() ? threadReader : undefined;
}

/** The main thread's own: its loop's idle time as it begins resting (taken in a callback, so outside the poll). */
export class LoopIdleRestClock implements RestClock {
  private constructor(private readonly reader: LoopIdleReader) {}

  static open(): LoopIdleRestClock | undefined {
    const reader = openReader();
    return reader && new LoopIdleRestClock(reader);
  }

  markRest(hb: Heartbeat): boolean {
    if (!this.reader.read()) return false;
    hb.restWithIdle(this.reader.atMs, this.reader.idleMs);
    return true;
  }

  close(): void {}
}

/**
 * The watchdog's: a loop that has been in its poll since the baseline gained as much idle time as the
 * clock advanced; what it lacks is time out of the poll. A loop out of its poll since it woke left it
 * at the baseline plus the idle time gained: known to the reading, not to a scheduler tick.
 */
export class LoopIdleProbe implements RestProbe {
  readonly lagMs = 0;
  private baseIdleMs = 0;
  private baseSinceMs = 0;

  private constructor(private readonly reader: LoopIdleReader) {}

  static open(hb: Heartbeat): LoopIdleProbe | undefined {
    const reader = openReader();
    if (!reader) return undefined;
    addon!.watchHeartbeat(hb.sab);
    return new LoopIdleProbe(reader);
  }

  takeBaseline(hb: Heartbeat): number {
    this.baseSinceMs = hb.restSinceMs;
    this.baseIdleMs = hb.restIdleMs;
    return this.baseSinceMs;
  }

  stillResting(): boolean {
    const r = this.reader;
    return r.read() && r.atMs - this.baseSinceMs - (r.idleMs - this.baseIdleMs) < REST_TAIL_MS;
  }

  wokeAtMs(): number {
    return this.reader.read() ? this.baseSinceMs + (this.reader.idleMs - this.baseIdleMs) : NaN;
  }

  /** Polls a resting loop without waking JavaScript: a wake of this thread is then ~half the cost. */
  sleepWhileResting(_hb: Heartbeat, seen: number, pollMs: number): void {
    addon!.sleepWhileResting(seen, pollMs, NATIVE_REST_MS, REST_TAIL_MS);
  }

  close(): void {}
}
