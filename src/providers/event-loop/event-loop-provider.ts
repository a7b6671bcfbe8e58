import { isMainThread as onMainThread } from '../../schema/this-thread.js';
import { attachCallbacks } from '../../schema/provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../../session/service-thread.js';
import { WatchdogDuty } from './heartbeat.js';
import { type LoopInterval, useLoopIntervals } from './delay-monitor.js';
import { reportUnwatchedStall, setWatchdogDuty } from './stall-watchdog.js';
import { runtimeEventLoop } from '../definitions/event-loop.js';
const isMainThread = onMainThread();

function writeDelay(i: LoopInterval): void {
  runtimeEventLoop.Delay.write(i.p50Ms, i.p99Ms, i.maxMs, i.meanMs, i.utilization, i.intervalMs, i.samples);
}

// One delay monitor per thread (each has its own loop; Runtime.Counters shares it) and one watchdog
// for the main thread, shared by every session: the finest IntervalSec and the smallest StallMs asked for win.
const sessions = new ProviderSessions('Runtime.EventLoop', (s) => {
  if (isServiceThread) return;
  const wantDelay = s.size > 0 && runtimeEventLoop.Delay.enabled;
  const wantStalls = s.size > 0 && isMainThread && runtimeEventLoop.StallStart.enabled;
  // The last session gets the partial interval before it goes.
  useLoopIntervals('event-loop', wantDelay ? s.smallestNumber('IntervalSec', 1, 0.01, 3600) : undefined, writeDelay);
  setWatchdogDuty(WatchdogDuty.StallEvents, wantStalls ? Math.round(s.smallestNumber('StallMs', 100, 1, 3_600_000)) : undefined);
});

// What runtimeEventLoop does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/event-loop.ts).
attachCallbacks(runtimeEventLoop, { onEnable: sessions.onEnable, onDisable: sessions.onDisable, onFlush: reportUnwatchedStall });
