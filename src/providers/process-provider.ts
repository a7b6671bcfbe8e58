import { isMainThread as onMainThread } from '../schema/this-thread.js';
import type { Worker } from 'node:worker_threads';
import { attachCallbacks, type EnableContext } from '../schema/provider.js';
import { workerRole } from '../session/service-workers.js';
import { tracepipeVersion } from '../session/version.js';
import { isServiceThread } from '../session/service-thread.js';
import { runtimeProcess } from './definitions/process.js';
import { liveWorkers } from './live-workers.js';
const isMainThread = onMainThread();

/** Node ≥ 24.6 names threads; on older versions a worker's name is ''. */
function threadName(worker: Worker): string {
  const name = (worker as Worker & { threadName?: unknown }).threadName;
  return typeof name === 'string' ? name : '';
}

function rundown(ctx: EnableContext, phase: 'start' | 'stop'): void {
  const p = runtimeProcess;
  const sid = ctx.sessionId;
  p.Process.write(
    sid,
    phase,
    process.pid,
    process.ppid,
    JSON.stringify(process.argv),
    JSON.stringify(process.execArgv),
    process.version,
    process.versions.v8,
    tracepipeVersion(),
    process.env.NODE_OPTIONS ?? '',
    process.platform,
    process.arch,
    process.title,
  );
  p.Thread.write(sid, phase, 0, 'main', 'main');
  for (const [id, w] of liveWorkers) p.Thread.write(sid, phase, id, threadName(w), workerRole(w));
  const r = process.resourceUsage();
  const m = process.memoryUsage();
  p.ResourceUsage.write(sid, phase, r.userCPUTime, r.systemCPUTime, r.maxRSS, m.rss, m.heapUsed, m.heapTotal, m.external, m.arrayBuffers, r.voluntaryContextSwitches, r.involuntaryContextSwitches, process.uptime());
}

// Rundown belongs to the process, so only its main thread writes it. At stop, onDisable runs while the
// session still records and its writes never park, so rundown never blocks (see docs/BUFFERING.md).
function onSession(phase: 'start' | 'stop'): (ctx: EnableContext) => void {
  return (ctx) => {
    if (isMainThread && !isServiceThread) rundown(ctx, phase);
  };
}

// What runtimeProcess does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/process.ts).
attachCallbacks(runtimeProcess, { onEnable: onSession('start'), onDisable: onSession('stop') });
