import { SessionMemory } from '../buffers/session-memory.js';
import { loadNativeAddon } from './native-addon.js';

/**
 * How a producing thread wakes a native drain (native/gc-hook/native_drain.cc), which Atomics.notify
 * cannot reach: through the addon, loaded on the thread's first such wake (a worker that never wakes
 * one never loads it). A wake is rare: a chunk taken or sealed while the drain sleeps, or the
 * budget half used.
 */
let addon: { wakeSession(sab: SharedArrayBuffer): void } | null | undefined;

SessionMemory.wakeNative = (sab) => {
  addon ??= loadNativeAddon<{ wakeSession(sab: SharedArrayBuffer): void }>('native_drain').addon ?? null;
  addon?.wakeSession(sab);
};
