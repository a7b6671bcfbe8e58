import { type PromiseStateReader, usePromiseStateReader } from '../schema/promise-settlement.js';
import { loadNativeAddon } from '../session/native-addon.js';

/**
 * The native addon's promise state reader, for spans whose `run` returned a native promise: with it a
 * span ends when the promise settles, as an error end if it was rejected; without it (not built, or
 * TRACEPIPE_GC_HOOK=0) the span ends when `fn` returns (src/schema/promise-settlement.ts). Loaded by
 * the first such span, not with the sessions.
 */
usePromiseStateReader(() => loadNativeAddon<PromiseStateReader>('promise_state').addon);
