/**
 * Where a worker thread that starts later finds the sessions that run, to join them from its first
 * event. The main thread publishes its sessions in the native addon's process-wide list where it is
 * built (native/gc-hook/session_registry.cc), which loads nothing: worker_threads' environment data
 * needs node:worker_threads, and node:stream with it, 2–5 ms of a startup session (BENCHMARKS.md
 * §42). Environment data carries them too once this thread has loaded worker_threads anyway, for a
 * worker without the addon, and it is all a worker thread publishes: a worker's sessions reach the
 * workers it makes as before.
 */
import { isMainThread, workerThreads, workerThreadsLoaded } from '../schema/this-thread.js';
import { SESSIONS_ENV_KEY } from './control-names.js';
import { loadNativeAddon } from './native-addon.js';
import type { ProviderConfig } from './provider-spec.js';
import type { SessionDescriptor } from './session-descriptor.js';

interface SessionList {
  publishSessions(list: [SharedArrayBuffer, string][]): void;
  publishedSessions(): [SharedArrayBuffer, string][];
}

function sessionList(): SessionList | undefined {
  const addon = loadNativeAddon<Partial<SessionList>>('native_drain').addon;
  return addon?.publishSessions && addon.publishedSessions ? (addon as SessionList) : undefined;
}

/** A descriptor but its memory, as a string (keywords are bigints). */
function encode(d: SessionDescriptor): [SharedArrayBuffer, string] {
  const providers = d.providers.map((p) => ({ ...p, keywords: p.keywords.toString() }));
  return [d.sab, JSON.stringify({ id: d.id, providers, originNs: d.originNs, rundown: d.rundown })];
}

/** The descriptor another thread (or copy of tracepipe) published, or undefined if it does not read as one. */
function decode(sab: SharedArrayBuffer, text: string): SessionDescriptor | undefined {
  try {
    const d = JSON.parse(text) as { id?: unknown; providers?: unknown; originNs?: unknown; rundown?: unknown };
    if (typeof d.id !== 'number' || typeof d.originNs !== 'string' || typeof d.rundown !== 'boolean' || !Array.isArray(d.providers)) return undefined;
    const providers: ProviderConfig[] = [];
    for (const p of d.providers as { name?: unknown; keywords?: unknown; level?: unknown; arguments?: unknown }[]) {
      if (typeof p?.name !== 'string' || typeof p.keywords !== 'string' || typeof p.level !== 'number' || typeof p.arguments !== 'object' || p.arguments === null) return undefined;
      providers.push({ name: p.name, keywords: BigInt(p.keywords), level: p.level, arguments: p.arguments as Record<string, string> } as ProviderConfig);
    }
    return { id: d.id, sab, providers, originNs: d.originNs, rundown: d.rundown };
  } catch {
    return undefined;
  }
}

/** This thread's sessions from now on, for the worker threads made later. */
export function publishSessions(sessions: readonly SessionDescriptor[]): void {
  const list = isMainThread() ? sessionList() : undefined;
  list?.publishSessions(sessions.map(encode));
  if (!list || workerThreadsLoaded()) workerThreads().setEnvironmentData(SESSIONS_ENV_KEY, [...sessions] as unknown as string);
}

/** The sessions published for this worker thread: the main thread's, and those its environment data names. */
export function publishedSessions(): SessionDescriptor[] {
  const list = sessionList()?.publishedSessions() ?? [];
  const native = list.map(([sab, text]) => decode(sab, text)).filter((d): d is SessionDescriptor => d !== undefined);
  const inherited = (workerThreads().getEnvironmentData(SESSIONS_ENV_KEY) as SessionDescriptor[] | undefined) ?? [];
  return [...inherited, ...native];
}
