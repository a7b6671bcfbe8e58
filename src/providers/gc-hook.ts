import { GcRing } from './gc-ring.js';
import { loadNativeAddon } from './native-addon.js';

/** The native GC hook (native/gc-hook/gc_hook.cc), built at install where a compiler is available. */
interface GcHookAddon {
  /** Records this thread's GC pauses into the ring from now on. */
  attach(ring: SharedArrayBuffer): void;
  /** Stops recording; the ring keeps what it holds. */
  detach(): void;
}

const loaded = loadNativeAddon<GcHookAddon>('gc_hook');

/** Runtime.GC records pauses through the GC hook in this process. */
export const gcHookLoaded = loaded.addon !== undefined;
/** Why this process runs without the GC hook though it was not turned off (TRACEPIPE_GC_HOOK=0). */
export const gcHookMissing: string | undefined = loaded.missing;

let ring: GcRing | undefined;

/** This thread's GC ring, created on first use; undefined without the hook. */
export function threadGcRing(): GcRing | undefined {
  if (!loaded.addon) return undefined;
  ring ??= new GcRing();
  return ring;
}

/** Starts or stops recording this thread's pauses into its ring. */
export function recordGcPauses(on: boolean): void {
  const r = threadGcRing();
  if (!r) return;
  if (on) loaded.addon!.attach(r.sab);
  else loaded.addon!.detach();
}
