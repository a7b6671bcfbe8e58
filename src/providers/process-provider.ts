import { subscribe } from 'node:diagnostics_channel';
import { isMainThread, type Worker } from 'node:worker_threads';
import { Level } from '../schema/level.js';
import { defineProvider, type EnableContext } from '../schema/provider.js';
import { workerRole } from '../session/service-workers.js';
import { TRACEPIPE_VERSION } from '../session/version.js';
import { isServiceThread } from './service-thread.js';

/**
 * Worker threads alive now. Node announces a new Worker only on the 'worker_threads' channel, so the
 * list is kept from import on, not just while a session runs (it costs one call per Worker created).
 */
const workers = new Map<number, Worker>();
if (isMainThread) {
  subscribe('worker_threads', (message) => {
    const worker = (message as { worker: Worker }).worker;
    const id = worker.threadId;
    workers.set(id, worker);
    worker.once('exit', () => workers.delete(id));
  });
}

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
    TRACEPIPE_VERSION,
    process.env.NODE_OPTIONS ?? '',
    process.platform,
    process.arch,
    process.title,
  );
  p.Thread.write(sid, phase, 0, 'main', 'main');
  for (const [id, w] of workers) p.Thread.write(sid, phase, id, threadName(w), workerRole(w));
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

/**
 * `Runtime.Process`: rundown when a session starts and when it stops. Every session that lists the
 * provider records every rundown written while it runs; `session` says whose start or stop it was.
 */
export const runtimeProcess = defineProvider('Runtime.Process', {
  events: {
    Process: {
      id: 1,
      level: Level.Informational,
      fields: [
        ['session', 'u32'],
        ['phase', 'string'],
        ['pid', 'u32'],
        ['ppid', 'u32'],
        ['argv', 'string'],
        ['execArgv', 'string'],
        ['nodeVersion', 'string'],
        ['v8Version', 'string'],
        ['tracepipeVersion', 'string'],
        ['nodeOptions', 'string'],
        ['platform', 'string'],
        ['arch', 'string'],
        ['title', 'string'],
      ],
      doc: 'Who the process is; argv and execArgv are JSON arrays.',
    },
    Thread: {
      id: 2,
      level: Level.Informational,
      fields: [['session', 'u32'], ['phase', 'string'], ['threadId', 'u32'], ['name', 'string'], ['role', 'string']],
      doc: "One per live thread: the main thread (0) and each worker_threads Worker (name only on Node >= 24.6); role is main, worker (the application's), tracepipe-drain or tracepipe-watchdog.",
    },
    ResourceUsage: {
      id: 3,
      level: Level.Informational,
      fields: [
        ['session', 'u32'],
        ['phase', 'string'],
        ['userCpuUs', 'u64'],
        ['systemCpuUs', 'u64'],
        ['maxRssKB', 'u64'],
        ['rssBytes', 'u64'],
        ['heapUsedBytes', 'u64'],
        ['heapTotalBytes', 'u64'],
        ['externalBytes', 'u64'],
        ['arrayBuffersBytes', 'u64'],
        ['voluntaryContextSwitches', 'u64'],
        ['involuntaryContextSwitches', 'u64'],
        ['uptimeSec', 'f64'],
      ],
      doc: 'process.resourceUsage() and process.memoryUsage().',
    },
  },
  onEnable: onSession('start'),
  onDisable: onSession('stop'),
});
