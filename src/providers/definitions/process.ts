import { Level } from '../../schema/level.js';
import { defineBuiltinProvider } from '../../schema/provider.js';

/**
 * `Runtime.Process`: rundown when a session starts and when it stops. Every session that lists the
 * provider records every rundown written while it runs; `session` says whose start or stop it was.
 */
export const runtimeProcess = defineBuiltinProvider('Runtime.Process', {
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
}, () => new URL('../default-profile.js', import.meta.url).href);
