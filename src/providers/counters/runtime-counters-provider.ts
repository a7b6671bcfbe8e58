import { requireBuiltin, isMainThread as onMainThread } from '../../schema/this-thread.js';
import { attachCallbacks, providerRegistry } from '../../schema/provider.js';
import { sessionMachineryIfLoaded } from '../../machinery.js';
import { type LoopInterval, useLoopIntervals } from '../event-loop/delay-monitor.js';
import { TALLY_KINDS, type TallyReading } from '../gc-pause-tally.js';
import { recordGcPausesFor, takeGcTally } from '../gc-provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../../session/service-thread.js';
import { type CounterKind, gcCounter, RUNTIME_COUNTERS, RUNTIME_SPACES, spaceCounter } from './runtime-counter-catalog.js';
import { runtimeCounters } from '../definitions/runtime-counters.js';
const { getHeapSpaceStatistics } = requireBuiltin('node:v8') as typeof import('node:v8');
const isMainThread = onMainThread();

interface Baseline {
  readonly atMs: number;
  readonly cpu: NodeJS.CpuUsage;
  readonly gc: TallyReading | undefined;
  readonly sessions: Map<number, { written: number; dropped: number }>;
}

let baseline: Baseline | undefined;

/** The process's sessions: the counters run only in one, so the machinery has loaded. */
const liveSessions = () => sessionMachineryIfLoaded()?.session.liveSessions() ?? [];

function takeBaseline(): Baseline {
  const sessions = new Map<number, { written: number; dropped: number }>();
  for (const s of liveSessions()) sessions.set(s.id, { written: s.memory.eventsWritten, dropped: s.memory.eventsDropped });
  return { atMs: performance.now(), cpu: process.cpuUsage(), gc: takeGcTally()?.read(), sessions };
}

interface Settable {
  set(value: number): void;
}

/** The counters by name, and those of each GC kind and heap space, looked up once (no name is built per publication). */
interface CounterTable {
  readonly byName: Readonly<Record<string, Settable>>;
  readonly gcKinds: ReadonlyArray<readonly [count: Settable, pauseMs: Settable]>;
  readonly spaces: ReadonlyMap<string, Settable>;
}

let table: CounterTable | undefined;

function counterTable(): CounterTable {
  const byName = runtimeCounters as unknown as Record<string, Settable>;
  return {
    byName,
    gcKinds: TALLY_KINDS.map((kind) => [byName[gcCounter(kind, 'Count')]!, byName[gcCounter(kind, 'PauseMs')]!] as const),
    spaces: new Map(RUNTIME_SPACES.map((space) => [space, byName[spaceCounter(space)]!])),
  };
}

function set(name: string, value: number): void {
  table!.byName[name]!.set(value);
}

/** One publication: every figure over the interval since the last one (or its end value). */
function publish(loop: LoopInterval): void {
  const was = baseline;
  const now = takeBaseline();
  baseline = now;
  if (!was) return;
  table ??= counterTable();
  const ms = Math.max(now.atMs - was.atMs, 1e-3);
  set('CpuUser', (now.cpu.user - was.cpu.user) / 10 / ms);
  set('CpuSystem', (now.cpu.system - was.cpu.system) / 10 / ms);
  const m = process.memoryUsage();
  set('Rss', m.rss);
  set('HeapUsed', m.heapUsed);
  set('HeapTotal', m.heapTotal);
  set('External', m.external);
  set('ArrayBuffers', m.arrayBuffers);
  for (const s of getHeapSpaceStatistics()) table.spaces.get(s.space_name)?.set(s.space_used_size);
  let count = 0;
  let ns = 0;
  table.gcKinds.forEach(([countCounter, pauseCounter], k) => {
    const dc = now.gc && was.gc ? now.gc.count[k]! - was.gc.count[k]! : 0;
    const dns = now.gc && was.gc ? now.gc.ns[k]! - was.gc.ns[k]! : 0;
    count += dc;
    ns += dns;
    countCounter.set(dc);
    pauseCounter.set(dns / 1e6);
  });
  set('GcCount', count);
  set('GcPauseMs', ns / 1e6);
  set('GcTimePercent', Math.min(100, ns / 1e4 / ms));
  set('LoopDelayP50', loop.p50Ms);
  set('LoopDelayP99', loop.p99Ms);
  set('LoopDelayMax', loop.maxMs);
  set('LoopUtilization', loop.utilization * 100);
  set('ActiveResources', process.getActiveResourcesInfo().length);
  for (const s of liveSessions()) {
    const before = was.sessions.get(s.id) ?? { written: 0, dropped: 0 };
    const after = now.sessions.get(s.id) ?? before;
    runtimeCounters.SessionStats.write(s.id, (after.written - before.written) >>> 0, after.dropped - before.dropped, s.memory.bufferUse * 100);
  }
  // Last: it closes the publication, so a reader knows the interval's figures are all in.
  set('IntervalMs', ms);
}

/** Every counter this thread's providers declare, described once per session: what tools show beside the values. */
function describeCounters(): void {
  const kinds = new Map<string, CounterKind>(RUNTIME_COUNTERS.map((c) => [c.name, c.kind]));
  for (const p of providerRegistry.all()) {
    for (const c of p.counters) {
      const kind = p === (runtimeCounters as unknown) ? kinds.get(c.name)! : 'gauge';
      runtimeCounters.CounterInfo.write(p.name, c.name, c.unit, kind, c.description);
    }
  }
}

// The process's figures are the main thread's to publish (its heap, its loop), on the interval
// ticker and loop sampler Runtime.EventLoop uses, from the pauses Runtime.GC's hook records.
const sessions = new ProviderSessions('Runtime.Counters', (s) => {
  if (!isMainThread || isServiceThread) return;
  if (s.size === 0) {
    useLoopIntervals('counters', undefined);
    recordGcPausesFor('counters', false);
    baseline = undefined;
    return;
  }
  recordGcPausesFor('counters', true);
  baseline ??= takeBaseline();
  useLoopIntervals('counters', s.smallestNumber('IntervalSec', 1, 0.01, 3600), publish);
});

// What runtimeCounters does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/runtime-counters.ts).
attachCallbacks(runtimeCounters, { onEnable: (ctx) => {
    sessions.onEnable(ctx);
    if (isMainThread && !isServiceThread) describeCounters();
  }, onDisable: sessions.onDisable });
