import { GcRing } from './gc-ring.js';
import { loadNativeAddon } from '../session/native-addon.js';
import { errorMessage } from '../schema/error-message.js';

/** The native GC hook (native/gc-hook/gc_hook.cc), built at install where a compiler is available. */
interface GcHookAddon {
  /**
   * Hooks this thread's GC pauses to the ring from now on (recorded while its Record word is set);
   * `doorbell` runs when the loop turns after the hook rang (armed, or a mark-compact).
   */
  attach(ring: SharedArrayBuffer, doorbell: () => void): void;
  /** Unhooks; the ring keeps what it holds. */
  detach(): void;
}

const loaded = loadNativeAddon<GcHookAddon>('gc_hook');

/** Runtime.GC records pauses through the GC hook in this process. */
export const gcHookLoaded = loaded.addon !== undefined;
/** Why this process runs without the GC hook though it was not turned off (TRACEPIPE_GC_HOOK=0). */
export const gcHookMissing: string | undefined = loaded.missing;

/**
 * How long the doorbell stays quiet after it rang: pauses meanwhile are handed over when it ends. A
 * loaded server scavenges hundreds of times a second; a ring per pause would cost it more than the
 * pauses' records (a mark-compact rings at once all the same).
 */
const QUIET_MS = 20;

let ring: GcRing | undefined;
const listeners = new Set<() => void>();
let quiet: NodeJS.Timeout | undefined;

/** This thread's GC ring, created on first use; undefined without the hook. */
export function threadGcRing(): GcRing | undefined {
  if (!loaded.addon) return undefined;
  ring ??= new GcRing();
  return ring;
}

function notify(): void {
  for (const l of listeners) {
    try {
      l();
    } catch (e) {
      process.emitWarning(`tracepipe: a GC pause listener threw: ${errorMessage(e)}`);
    }
  }
}

function rang(): void {
  // The quiet period first: the doorbell is re-armed when it ends whatever the listeners do, and a
  // last listener that stops meanwhile clears it with the hook.
  if (quiet) quiet.refresh();
  else {
    quiet = setTimeout(endQuiet, QUIET_MS);
    quiet.unref();
  }
  notify();
}

function endQuiet(): void {
  // Armed first: a pause from here on rings again, so none waits past this hand-over unannounced.
  ring?.arm();
  notify();
}

/**
 * Calls `listener` on this thread when the loop turns after GC pauses (at most QUIET_MS after the
 * pause, at once after a mark-compact), whatever recorded them; hooks the thread while anyone
 * listens. Undefined without the hook. The returned function stops listening.
 */
export function onGcHook(listener: () => void): (() => void) | undefined {
  const r = threadGcRing();
  if (!r) return undefined;
  if (listeners.size === 0) {
    loaded.addon!.attach(r.sab, rang);
    r.arm();
  }
  listeners.add(listener);
  return () => {
    if (!listeners.delete(listener) || listeners.size > 0) return;
    loaded.addon!.detach();
    clearTimeout(quiet);
    quiet = undefined;
  };
}

/** Calls `listener` when the loop turns after one or more mark-compacts of this thread (undefined without the hook). */
export function onMarkCompact(listener: () => void): (() => void) | undefined {
  const r = threadGcRing();
  if (!r) return undefined;
  let seen = r.markCompacts;
  return onGcHook(() => {
    const n = r.markCompacts;
    if (n === seen) return;
    seen = n;
    listener();
  });
}

/** Whether Runtime.GC or Runtime.Counters records (recordGcPauses), as opposed to an early hold. */
let recording = false;
/** Whether holdGcPauses holds the pauses of a startup that has no session yet. */
let holding = false;

/** Starts or stops recording this thread's pauses into its ring (while it is hooked: see onGcHook). */
export function recordGcPauses(on: boolean): void {
  recording = on;
  threadGcRing()?.setRecording(on || holding);
}

/**
 * Records this thread's pauses from now on, before any session exists: a startup session's trace then
 * holds the collections tracepipe's own loading causes, which wait in the ring until Runtime.GC takes
 * them. Returns how to let go, once the sessions asked for have started: if none records pauses, the
 * ring's are discarded then (a session started later must not hold pauses from before it).
 */
export function holdGcPauses(): () => void {
  const unhook = onGcHook(() => undefined);
  if (!unhook) return () => undefined;
  holding = true;
  ring!.setRecording(true);
  return () => {
    if (!holding) return;
    holding = false;
    if (!recording) {
      ring!.setRecording(false);
      ring!.take(() => undefined);
    }
    unhook();
  };
}
