import { type EventLoopUtilization, monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { Level } from '../../schema/level.js';
import { defineProvider } from '../../schema/provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../service-thread.js';
import { WatchdogDuty } from './heartbeat.js';
import { setWatchdogDuty } from './stall-watchdog.js';

const RESOLUTION_MS = 10;

/** Delay statistics of this thread's event loop over one interval. */
class DelayMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private since = performance.now();
  private timer: NodeJS.Timeout;

  constructor(private intervalSec: number) {
    this.histogram.enable();
    this.timer = this.schedule();
  }

  private schedule(): NodeJS.Timeout {
    // After the timers phase: a blocked loop's overdue histogram timer must record the delay before
    // this interval's figures are read and the histogram reset.
    const t = setInterval(() => setImmediate(() => this.sample()), this.intervalSec * 1000);
    t.unref();
    return t;
  }

  setInterval(sec: number): void {
    if (sec === this.intervalSec) return;
    this.intervalSec = sec;
    clearInterval(this.timer);
    this.timer = this.schedule();
  }

  sample(): void {
    const h = this.histogram;
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const util = performance.eventLoopUtilization(elu, this.elu).utilization;
    // The histogram records whole timer periods: the delay is what exceeds the resolution. An interval
    // in which the loop never turned has no samples: its delay is the whole interval.
    const empty = h.count === 0;
    const ms = (ns: number) => (empty ? now - this.since : Math.max(0, ns / 1e6 - RESOLUTION_MS));
    runtimeEventLoop.Delay.write(ms(h.percentile(50)), ms(h.percentile(99)), ms(h.max), ms(h.mean), util, now - this.since, h.count);
    h.reset();
    this.elu = elu;
    this.since = now;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

let delay: DelayMonitor | undefined;

// One delay monitor per thread (each has its own loop) and one watchdog for the main thread, shared by
// every session: the finest IntervalSec and the smallest StallMs asked for win.
const sessions = new ProviderSessions('Runtime.EventLoop', (s) => {
  if (isServiceThread) return;
  const wantDelay = s.size > 0 && runtimeEventLoop.Delay.enabled;
  const wantStalls = s.size > 0 && isMainThread && runtimeEventLoop.StallStart.enabled;
  if (wantDelay) {
    const sec = s.smallestNumber('IntervalSec', 1, 0.01, 3600);
    if (delay) delay.setInterval(sec);
    else delay = new DelayMonitor(sec);
  } else if (delay) {
    // The last session gets the partial interval before it goes.
    delay.sample();
    delay.stop();
    delay = undefined;
  }
  setWatchdogDuty(WatchdogDuty.StallEvents, wantStalls ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
});

/**
 * `Runtime.EventLoop`: this thread's event-loop delay and utilisation every `IntervalSec` (default 1),
 * and, for the main thread, stalls longer than `StallMs` (default 100) seen by a watchdog thread
 * while they last.
 */
export const runtimeEventLoop = defineProvider('Runtime.EventLoop', {
  keywords: { delay: 0x1n, stalls: 0x2n },
  events: {
    Delay: {
      id: 1,
      level: Level.Informational,
      keywords: ['delay'],
      fields: [['p50Ms', 'f64'], ['p99Ms', 'f64'], ['maxMs', 'f64'], ['meanMs', 'f64'], ['utilization', 'f64'], ['intervalMs', 'f64'], ['samples', 'u32']],
      doc: 'Event-loop delay percentiles (perf_hooks monitorEventLoopDelay, 10 ms resolution) and utilisation over the last interval.',
    },
    StallStart: {
      id: 2,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['blockedMs', 'f64']],
      doc: "Written by the watchdog thread while `thread`'s loop is still blocked: no heartbeat for blockedMs.",
    },
    StallEnd: {
      id: 3,
      level: Level.Warning,
      keywords: ['stalls'],
      fields: [['thread', 'u32'], ['durationMs', 'f64']],
      doc: 'The stalled loop turned again; durationMs is the gap between the heartbeats around the stall.',
    },
  },
  onEnable: sessions.onEnable,
  onDisable: sessions.onDisable,
});
