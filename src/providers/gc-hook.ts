import { createRequire } from 'node:module';
import { GcRing } from './gc-ring.js';

/** The native GC hook (native/gc-hook), built at install where a compiler is available. */
interface GcHookAddon {
  /** Records this thread's GC pauses into the ring from now on. */
  attach(ring: SharedArrayBuffer): void;
  /** Stops recording; the ring keeps what it holds. */
  detach(): void;
}

const ADDON = '../../native/gc-hook/build/Release/gc_hook.node';

function load(): { addon?: GcHookAddon; missing?: string } {
  // Turned off on purpose (also how tests run the fallback): nothing is missing.
  if (process.env.TRACEPIPE_GC_HOOK === '0') return {};
  try {
    return { addon: createRequire(import.meta.url)(ADDON) as GcHookAddon };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'MODULE_NOT_FOUND') return { missing: 'it was not built at install' };
    // Typically built for another Node.js (NODE_MODULE_VERSION): `npm rebuild tracepipe` fixes it.
    return { missing: `it does not load: ${err.message.split('\n')[0]}` };
  }
}

const loaded = load();

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
