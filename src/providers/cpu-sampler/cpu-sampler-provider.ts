import { attachCallbacks,  } from '../../schema/provider.js';
import { ProviderSessions } from '../provider-sessions.js';
import { isServiceThread } from '../../session/service-thread.js';
import { configureSampling, flushSamples } from './thread-sampler.js';
import { runtimeCpuSampler } from '../definitions/cpu-sampler.js';

/**
 * How often the set of sessions that enabled the provider on this thread changed. Counted on service
 * threads too: the main thread's watchdog writes samples, and a session that joins has seen none of
 * the definitions any writer made before it (SampleWriter defines everything again after a change).
 */
let sessionChanges = 0;

export function samplerSessionChanges(): number {
  return sessionChanges;
}

const sessions = new ProviderSessions('Runtime.CpuSampler', (s) => {
  sessionChanges++;
  if (isServiceThread) return;
  configureSampling(s.size > 0 ? Math.round(s.smallestNumber('IntervalUs', 1000, 50, 1_000_000)) : undefined);
});

// What runtimeCpuSampler does when a session enables it; its definition loads with `import 'tracepipe'` (definitions/cpu-sampler.ts).
attachCallbacks(runtimeCpuSampler, { onEnable: sessions.onEnable, onDisable: sessions.onDisable, onFlush: flushSamples });
